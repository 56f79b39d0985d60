"""The README's promises: its Python session runs as written, its scan command is the one CI-tested,
and `.ci/run` calls the README's test command."""

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_python_session_runs_as_written():
    session = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(session, {}, "README", "README.md", 0)
    assert test.examples, "the README's session has no examples"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    test_command = next(c for c in commands if "scripts/test.sh" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_scan_output_is_the_example_hand():
    """The rows the README prints for the example photo are the hand read by eye."""
    rows = re.findall(r"row \d: (.*)", README)
    truth = [
        line.split()
        for line in (ROOT / "examples" / "rack_full.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    shown = [re.sub(r"[\[\]]", " ", row).split() for row in rows]
    assert shown == truth
