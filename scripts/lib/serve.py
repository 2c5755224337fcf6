"""`swapsight serve` on a free loopback port, for the scripts that measure it
(scripts/bench-serve-report, which scripts/bench-large runs, scripts/sampler-cpu
and scripts/sse-stall): start it with its recordings in a folder, wait for the
address it prints and for /healthz, ask it over HTTP, read its memory from
/proc/PID/status (Linux), stop it.

    with Serve(BIN, recordings) as srv:
        srv.kib("VmRSS"); srv.get("/metrics"); srv.pid; srv.port
"""

import re
import subprocess
import threading
import time
import urllib.request

from proctree import kb, read

ADDRESS = re.compile(r"http://127\.0\.0\.1:(\d+)")
# Straight to the loopback, whatever proxy the environment names.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Serve:
    def __init__(self, bin, recordings, wait_s=30):
        self.proc = subprocess.Popen(
            [bin, "serve", "--addr", "127.0.0.1:0", "--recordings", recordings],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.pid = self.proc.pid
        self.said = []  # what it printed, for an error
        self.port = None
        self._found = threading.Event()
        # Read all it says, to its end: a full pipe would block it.
        threading.Thread(target=self._listen, daemon=True).start()
        try:
            self._wait(wait_s)
        except BaseException:
            self.stop()
            raise

    def _listen(self):
        for line in self.proc.stdout:
            self.said.append(line)
            m = ADDRESS.search(line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._found.set()
        self._found.set()  # it ended

    def _wait(self, wait_s):
        deadline = time.time() + wait_s
        if not self._found.wait(wait_s) or self.port is None:
            raise RuntimeError(f"serve printed no address: {''.join(self.said)}")
        self.base = f"http://127.0.0.1:{self.port}"
        while True:
            try:
                self.get("/healthz", timeout=1)
                return
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"serve does not answer: {''.join(self.said)}")
                time.sleep(0.1)

    def get(self, path, timeout=600):
        """The body of GET `path` (bytes); an HTTP error raises."""
        with OPENER.open(self.base + path, timeout=timeout) as r:
            return r.read()

    def metric(self, name):
        """A figure of /metrics, or None where it is not there."""
        text = self.get("/metrics", timeout=10).decode(errors="replace")
        m = re.search(rf"^{name} (\d+)", text, re.M)
        return int(m.group(1)) if m else None

    def kib(self, key="VmRSS"):
        """A figure of its /proc/PID/status in kB: VmRSS, VmHWM."""
        return kb(read(f"/proc/{self.pid}/status"), key)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()
