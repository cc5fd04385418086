from binder_py.cli import main
import sys
sys.exit(main())
