import sys
from pathlib import Path

# Make `import mp_models` work without PYTHONPATH=python (scripts/test.sh sets it).
PYTHON_DIR = Path(__file__).resolve().parents[1]
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))
