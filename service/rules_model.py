"""Rules in requests: a preset name (``"okey101"``) or a preset plus house-rule overrides
(``{"name": "classic", "wrap_13_1": false}``).

The override model is built from the fields of ``okey.Rules``, so a new rule switch reaches the API
without a second list to keep in step; numbers get the bounds a real table can have.

>>> to_rules("okey101").hand_size
21
>>> to_rules(RulesOverrides(name="classic", wrap_13_1=False)).wrap_13_1
False
"""

from __future__ import annotations

import typing
from dataclasses import fields
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from okey.rules import PRESETS, Rules

# Bounds on the numeric switches, so nonsense (a 0-tile hand) is refused as a 422 up front.
_BOUNDS: dict[str, tuple[int, int]] = {
    "max_run_length": (3, 13),
    "hand_size": (3, 21),
    "max_rack_tiles": (4, 22),
    "start_points": (1, 1000),
    "opening_threshold": (0, 1000),
    "pairs_opening_min": (1, 11),
    "rounds": (1, 100),
}


def _override_fields() -> dict[str, Any]:
    hints = typing.get_type_hints(Rules)
    spec: dict[str, Any] = {}
    for field in fields(Rules):
        kind = hints[field.name]
        if field.name == "name":
            constraint = Field(
                default=None,
                min_length=1,
                max_length=40,
                description="preset to start from (classic, okey101) or a house-rule label",
            )
        elif field.name == "colour_finish_colours":
            constraint = Field(default=None, pattern="^[RYBK]{1,4}$")
        elif field.name in _BOUNDS:
            low, high = _BOUNDS[field.name]
            constraint = Field(default=None, ge=low, le=high)
        else:
            constraint = Field(default=None)
        spec[field.name] = (kind | None, constraint)
    return spec


RulesOverrides = create_model(  # type: ignore[call-overload]
    "RulesOverrides",
    __config__=ConfigDict(extra="forbid"),
    __doc__="A preset (``name``) with house-rule overrides; unset fields keep the preset's value.",
    **_override_fields(),
)

PresetName = Annotated[str, Field(description=f"a preset: {', '.join(PRESETS)}", max_length=40)]
RulesSpec = PresetName | RulesOverrides  # type: ignore[valid-type]


def to_rules(spec: str | BaseModel | None) -> Rules:
    """The ``Rules`` value of a request's rules field; ``ValueError`` naming a wrong preset."""
    if spec is None:
        return Rules.classic()
    if isinstance(spec, str):
        return Rules.preset(spec)
    overrides = spec.model_dump(exclude_none=True)
    rules = Rules.from_dict(overrides)
    if rules.max_rack_tiles < rules.hand_size:
        raise ValueError(
            f"max_rack_tiles ({rules.max_rack_tiles}) is below hand_size ({rules.hand_size})"
        )
    return rules
