"""opinfo.py's entries run in child processes (`opinfo.py --worker`), fed
one at a time, so that a crash or a hang in stride costs the entry that
caused it and not the report."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

OPINFO = Path(__file__).with_name("opinfo.py")
# An entry's child may run this long without a word before it counts as
# hung; starting one (importing torch and its op database) may take longer.
ENTRY_TIMEOUT_S = 120
START_TIMEOUT_S = 300


def exit_description(returncode):
    if returncode is None:
        return f"hung (no answer in {ENTRY_TIMEOUT_S} s)"
    if returncode < 0:
        return f"crashed the process ({signal.Signals(-returncode).name})"
    return f"crashed the process (exit status {returncode})"


class Worker:
    """One child process, fed one entry at a time. A thread reads its lines
    into a queue, so that a silent child can be waited for with a timeout."""

    def __init__(self):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"}
        self.process = subprocess.Popen(
            [sys.executable, str(OPINFO), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if self._next_line(START_TIMEOUT_S) != "ready\n":
            raise RuntimeError("The walk's child process did not start; see its errors above.")

    def _next_line(self, timeout):
        """The child's next line; "" where it has exited, None where it has
        said nothing for `timeout` seconds (it is then killed)."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            self.process.kill()
            self.process.wait()
            return None

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # the child has exited

    def run(self, index, crash_row):
        """The entry's row, or crash_row(index, dtype, how) where the child
        died or hung."""
        self.process.stdin.write(f"{index}\n")
        self.process.stdin.flush()
        dtype = None
        while True:
            line = self._next_line(ENTRY_TIMEOUT_S)
            if not line:
                returncode = None if line is None else self.process.wait()
                return crash_row(index, dtype, exit_description(returncode))
            kind, _, rest = line.partition(" ")
            if kind == "row":
                return json.loads(rest)
            dtype = rest.strip()

    @property
    def alive(self):
        return self.process.poll() is None

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def serve(pending, rows, errors, crash_row):
    """Runs entries from the shared queue in a child, starting a new child
    after one dies. An error of the walk itself goes to `errors`."""
    child = None
    try:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                break
            if child is None or not child.alive:
                child = Worker()
            rows.append(child.run(index, crash_row))  # list.append is atomic
    except Exception as error:
        errors.append(error)
    if child is not None and child.alive:
        child.close()


def run_in_children(indices, jobs, crash_row):
    """The rows of the entries `indices`, run in `jobs` child processes;
    crash_row(index, dtype, how) stands for an entry whose child died."""
    rows, pending, errors = [], queue.Queue(), []
    for index in indices:
        pending.put(index)
    threads = [
        threading.Thread(target=serve, args=(pending, rows, errors, crash_row)) for _ in range(jobs)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return rows
