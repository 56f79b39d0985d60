from istaka.cli import main

raise SystemExit(main())
