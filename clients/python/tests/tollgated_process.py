"""tollgated started by a test on a loopback port, over a fresh data dir (shared by the tests)."""

import os
import shutil
import subprocess
import tempfile
import time

STARTUP_TIMEOUT = 30.0


class TollgatedProcess:
    """tollgated on 127.0.0.1:0 with the given manifests applied at start; `address` once serving."""

    def __init__(self, manifests, prefix="tollgate-python-test-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "tollgated.log"), "wb")
        self.process = subprocess.Popen(
            [
                os.environ["TOLLGATED"],
                "--listen=127.0.0.1:0",
                f"--data-dir={self.dir}/data",
                f"--port-file={port_file}",
                f"--manifests={','.join(manifests)}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        # Wait on the condition (the port file appears once serving), with a deadline.
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not os.path.exists(port_file):
            if self.process.poll() is not None:
                raise RuntimeError(f"tollgated exited: {self.read_log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"tollgated did not start: {self.read_log()}")
            time.sleep(0.02)
        with open(port_file) as f:
            self.address = f"127.0.0.1:{f.read().strip()}"

    def read_log(self) -> str:
        with open(os.path.join(self.dir, "tollgated.log"), "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
