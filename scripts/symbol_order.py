#!/usr/bin/env python3
"""Writes assets/symbol-order.txt: the functions of the release binary that a headless run
touches, so that the linker puts them side by side (build.rs; docs/PERFORMANCE.md, "The
code a run touches, packed"). Every page of code a run touches costs a 64 KB window of
resident memory (the kernel's fault-around): ~3 MB of functions spread over 19 MB of code made
16 MB resident.

Usage: scripts/symbol_order.py BINARY [OUT]
BINARY must be a release build that still has its symbols, from the same profile as the one
shipped (the names carry a hash of the build's settings):
    HARNESS9_KEEP_SYMBOLS=1 cargo build --release && scripts/symbol_order.py target/release/harness9
Needs valgrind (callgrind lists every function that ran). Runs, each against a mock server on
127.0.0.1 in a fresh home: `exec` streaming a 20,000-token answer, `sessions`, `--version`.
Names missing from a later build are skipped by the linker, so a stale list costs only memory.
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading


def long_answer():
    """The 20,000-token answer of benches/tui_session.rs's `exec` measure."""
    def chunk(text):
        delta = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        return "data: " + json.dumps(delta) + "\n\n"
    out = []
    for i in range(20000):
        m = i % 400
        if m == 0:
            t = "\n\n## Section\n\n"
        elif m == 100:
            t = "\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n"
        elif m == 200:
            t = "\n\n- a list item with `code`\n- another **bold** item\n\n"
        elif i % 25 == 0:
            t = "\n\n"
        else:
            t = "word%d " % i
        out.append(chunk(t))
    out.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    out.append('data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20000}}\n\n')
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


BODY = long_answer()


class Mock(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


def functions_run(binary, args, base_url, scratch):
    """The binary's own functions that ran, in the order callgrind names them."""
    home = os.path.join(scratch, "home")
    repo = os.path.join(scratch, "repo")
    os.makedirs(home, mode=0o700, exist_ok=True)
    os.makedirs(repo, exist_ok=True)
    out = os.path.join(scratch, "callgrind.out")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "HARNESS9_HOME": home,
        "OPENAI_API_KEY": "sk-order",
        "OPENAI_BASE_URL": base_url,
    }
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
         "--callgrind-out-file=" + out, binary] + args,
        cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, check=False,
    )
    names, obj = [], None
    name = os.path.realpath(binary)
    with open(out) as lines:
        for line in lines:
            if line.startswith("ob="):
                obj = os.path.realpath(line[3:].strip())
            elif line.startswith("fn=") and obj == name:
                symbol = line[3:].strip()
                # Callgrind marks recursion levels with a quote suffix: the symbol is the same.
                names.append(symbol.split("'")[0])
    return names


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else "assets/symbol-order.txt"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mock)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = "http://127.0.0.1:%d/v1" % server.server_address[1]
    ordered, seen = [], set()
    for args in (["exec", "--trust", "write a long answer"], ["sessions"], ["--version"]):
        with tempfile.TemporaryDirectory() as scratch:
            for symbol in functions_run(binary, args, base_url, scratch):
                if symbol not in seen and not symbol.startswith("("):
                    seen.add(symbol)
                    ordered.append(symbol)
    server.shutdown()
    if len(ordered) < 100:
        sys.exit("only %d functions ran: is %s unstripped?" % (len(ordered), binary))
    with open(target, "w") as out:
        out.write("\n".join(ordered) + "\n")
    print("%d functions written to %s" % (len(ordered), target))


if __name__ == "__main__":
    main()
