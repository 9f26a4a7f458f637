"""Imported by `wireup-launch --preload=preload_probe` in the tests: says so once per import."""
import os
import sys

sys.stderr.write(f"PRELOADED pid={os.getpid()}\n")
