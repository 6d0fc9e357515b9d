from fauxka.report import main

raise SystemExit(main())
