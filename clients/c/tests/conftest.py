"""The C client against a live stack: the Python client tests' stack (development server, authd
on a private socket, authctl), and libauthd-client installed by `make install` into a temporary
prefix, with a test program built against it through pkg-config as an app would build."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("python_client_stack", ROOT / "clients/python/tests/conftest.py")
_stack = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stack)
stack_factory = _stack.stack_factory
stack = _stack.stack


@pytest.fixture(scope="session")
def check_program():
    """authd-client-check, compiled with `pkg-config --cflags --libs authd-client glib-2.0`."""
    prefix = pathlib.Path(tempfile.mkdtemp(prefix="authd-c-client-"))
    try:
        install = subprocess.run(["make", "--no-print-directory", "install", f"PREFIX={prefix}", "CONFIGURATION=debug"],
                                 cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert install.returncode == 0, install.stdout + install.stderr
        environment = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "authd-client", "glib-2.0"], env=environment,
                               capture_output=True, text=True, check=True).stdout.split()
        # The library itself is built without -Werror by make install (a new compiler's warning
        # must not stop an install); its warnings fail here.
        warnings = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Wshadow", "-Werror", "-c", "-o", "/dev/null",
                                   str(ROOT / "clients/c/authd-client.c")], capture_output=True, text=True)
        assert warnings.returncode == 0, warnings.stderr
        program = prefix / "authd-client-check"
        compiled = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(program),
                                   str(ROOT / "clients/c/tests/authd-client-check.c"), *flags], capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr
        yield str(program)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
