"""The authd benchmark suite (issue 7's P1-P8): starts a development server, authd and the
baselines on this machine, measures, and prints every figure beside its baselines and target.

Run by scripts/bench, which builds everything and provides a private keyring:
    run.py --bin RELEASE_DIR --tools TOOLS_DIR [--quick] [--json FILE]

Figures are medians over repeated runs, with the min-max of those runs. Nothing here is a
pass/fail test: a figure that misses its target is printed as such."""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TOKEN_LINE = '{"jsonrpc":"2.0","id":1,"method":"session.token","params":{}}'
ANON_KEY = "bench-anon-key"


def log(message):
    print(message, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        self.tools = os.path.abspath(args.tools)
        self.quick = args.quick
        self.work = tempfile.mkdtemp(prefix="authd-bench.")
        os.chmod(self.work, 0o700)
        self.processes = []
        self.env = dict(os.environ)
        self.env["XDG_CONFIG_HOME"] = os.path.join(self.work, "config")
        self.env["XDG_STATE_HOME"] = os.path.join(self.work, "state")
        self.results = {}

    # ---- processes -------------------------------------------------------------------------

    def spawn(self, argv, env=None, name="proc"):
        out = open(os.path.join(self.work, name + ".out"), "w")
        err = open(os.path.join(self.work, name + ".err"), "w")
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env or self.env, cwd=self.work, start_new_session=True)
        self.processes.append(process)
        return process

    def stop(self, process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self):
        for process in reversed(self.processes):
            self.stop(process)
        shutil.rmtree(self.work, ignore_errors=True)

    def wait_for(self, condition, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.02)
        raise RuntimeError("timed out waiting for " + what)

    def read(self, name):
        try:
            with open(os.path.join(self.work, name)) as handle:
                return handle.read()
        except FileNotFoundError:
            return ""

    # ---- the stack -------------------------------------------------------------------------

    def dev_server(self, name, lifetime):
        process = self.spawn([os.path.join(self.bin, "authd-dev-server"), "--port", "0", "--anon-key", ANON_KEY,
                              "--access-token-lifetime", str(lifetime)], name=name)
        self.wait_for(lambda: "listening on" in self.read(name + ".out"), "the development server")
        url = self.read(name + ".out").split()[-1]
        return process, url

    def sign_up(self, url, email, password):
        request = urllib.request.Request(url + "/auth/v1/signup", method="POST",
                                         data=json.dumps({"email": email, "password": password}).encode(),
                                         headers={"Content-Type": "application/json", "apikey": ANON_KEY})
        urllib.request.urlopen(request).read()

    def refresh_grants(self, url):
        return json.load(urllib.request.urlopen(url + "/auth/v1/admin/dev/stats"))["refresh_grants"]

    def authd_env(self, socket_path):
        env = dict(self.env)
        env["AUTHD_SOCKET"] = socket_path
        return env

    def authd(self, name, url, socket_path, extra=()):
        argv = [os.path.join(self.bin, "authd"), "--profile", name, "--url", url, "--anon-key", ANON_KEY, "--log-level", "warning", *extra]
        process = self.spawn(argv, env=self.authd_env(socket_path), name=name)
        self.wait_for(lambda: self.answers(socket_path), "authd on " + socket_path)
        return process

    def answers(self, path):
        try:
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(5)
                client.connect(path)
                client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}\n')
                return b"result" in client.recv(65536)
        except OSError:
            return False

    def login(self, socket_path, email, password):
        subprocess.run([os.path.join(self.bin, "authctl"), "login", "--email", email, "--password-stdin"], input=password + "\n",
                       env=self.authd_env(socket_path), check=True, capture_output=True, text=True)

    def signed_in_stack(self, name, lifetime, extra=()):
        _, url = self.dev_server(name + "-server", lifetime)
        email, password = name + "@example.com", "bench-password-" + name
        self.sign_up(url, email, password)
        path = os.path.join(self.work, name + ".sock")
        daemon = self.authd(name, url, path, extra)
        self.login(path, email, password)
        return daemon, url, path

    # ---- measuring -------------------------------------------------------------------------

    def roundtrip(self, mode, path, requests, clients, line=None):
        argv = [os.path.join(self.tools, "roundtrip"), mode, path, str(requests), str(clients)] + ([line] if line else [])
        return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)

    @staticmethod
    def interleaved(runs, measures):
        """{name: [result per run]} with the targets taking turns (a, b, c, a, b, c, …), so that
        a slow spell of this shared machine falls on all of them alike instead of on whichever
        target happened to run during it."""
        results = {name: [] for name in measures}
        for _ in range(runs):
            for name, measure in measures.items():
                results[name].append(measure())
        return results

    @staticmethod
    def spread(values):
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    @staticmethod
    def rss_kib(pid, field="VmRSS"):
        """A memory figure of /proc/PID/status in KiB: VmRSS, or RssAnon (heap, stacks: the
        process's own) or RssFile (mapped files, mostly shared libraries' pages)."""
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    @staticmethod
    def cpu_seconds(pid):
        """The CPU time (user + system) process PID has used so far, from /proc/PID/stat."""
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def hyperfine(self, commands, runs):
        export = os.path.join(self.work, "hyperfine.json")
        argv = ["hyperfine", "-N", "--warmup", "20", "--runs", str(runs), "--export-json", export, "--style", "none"]
        for name, command in commands:
            argv += ["-n", name, command]
        subprocess.run(argv, check=True, capture_output=True, env=self.env, cwd=self.work)
        with open(export) as handle:
            return {entry["command"]: entry for entry in json.load(handle)["results"]}


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open("/proc/meminfo") as handle:
        memory = int(handle.readline().split()[1]) // 1024
    return "%s, %d cores, %d MiB, Linux %s" % (model, os.cpu_count(), memory, platform.release())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--tools", required=True)
    parser.add_argument("--quick", action="store_true", help="fewer requests and runs, for a smoke test")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    bench = Bench(args)
    try:
        from figures import run_all
        rows = run_all(bench)
    finally:
        bench.close()
    print("authd benchmarks, %s UTC" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    print("machine: " + machine())
    print()
    print("| figure | authd | baseline | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (row["figure"], row["authd"], row["baseline"], row.get("ratio", ""), row["target"], row["met"]))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": machine(), "rows": rows, "raw": bench.results}, handle, indent=2)


if __name__ == "__main__":
    main()
