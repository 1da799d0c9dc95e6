# nanoGPT's "poor man's configurator": exec'd by train.py and sample.py, it
# overrides their globals from `--key=value` arguments.
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    assert arg.startswith("--"), f"expected --key=value, got {arg}"
    key, val = arg[2:].split("=", 1)
    assert key in globals(), f"unknown config key: {key}"
    try:
        attempt = literal_eval(val)
    except (SyntaxError, ValueError):
        attempt = val  # a string
    assert type(attempt) is type(globals()[key]), f"{key}: expected {type(globals()[key])}"
    print(f"Overriding: {key} = {attempt}")
    globals()[key] = attempt
