from hfpatch.cli import main

raise SystemExit(main())
