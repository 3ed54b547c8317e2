"""gunicorn's own CPU a request: the crowd benchmark's gunicorn command serving a WSGI function that returns a constant.

What a request costs before any Django view or database work (docs/load.md, "What the serving layer costs"):
``bench/crowdbench.py``'s command (docs/deploy.md's, with its access log and ``bench/gunicorn_conf.py``, so each
worker has loaded Django's URLconf as the app's workers have), one connection a request as the crowd opens them,
at a fixed rate for a bounded time, to 127.0.0.1 only. Prints the gunicorn process tree's CPU a request and a
judgment (two requests)::

    python bench/gunicorn_floor.py [--rate 333] [--duration 20] [--workers 5]
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BODY = b'{"assignment": null}'
#: A request as the crowd sends `next`: a token header, one connection a request.
REQUEST = (b"GET /api/v1/annotate/next HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token "
           + b"x" * 40 + b"\r\nAccept: application/json\r\nConnection: close\r\n\r\n")


if __name__ != "__main__":  # imported by a gunicorn worker: Django set up as config/wsgi.py sets it up
    import django

    django.setup()


def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))])
    return [BODY]


def _one(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(REQUEST)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer.startswith(b"HTTP/1.1 200")


def main() -> int:
    from bench.crowdbench import gunicorn_command
    from bench.crowdbench_stats import clock_ticks_per_s, tree_ticks
    from bench.pgcluster import free_port
    from bench.loadtest_servers import Server

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=333.0, help="requests a second (2,000 annotators: ~333)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of requests (at most 300)")
    parser.add_argument("--workers", type=int, default=5, help="sync workers (docs/deploy.md: 2 x cores + 1)")
    args = parser.parse_args()
    duration = min(args.duration, 300.0)
    tmp = Path(tempfile.mkdtemp(prefix="dmt-gunicorn-floor-"))
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "False",
           "SECRET_KEY": os.environ.get("SECRET_KEY", "gunicorn-floor-" + "k" * 40), "ALLOWED_HOSTS": "127.0.0.1"}
    server = Server(name="floor", command=gunicorn_command(wsgi="bench.gunicorn_floor:application", port=port,
                                                           workers=args.workers, threads=1, worker_class="sync",
                                                           access_log=str(tmp / "access.log")),
                    cwd=ROOT, env=env, log=tmp / "gunicorn.log", port=port, probe_path="/")
    server.start()
    try:
        server.warm_up(workers=args.workers)
        pid = server.proc.pid if server.proc else 0
        ticks0 = tree_ticks(pid)
        started, sent, answered = time.monotonic(), 0, 0
        with ThreadPoolExecutor(max_workers=64) as pool:
            futures = []
            while (elapsed := time.monotonic() - started) < duration:
                wait = sent / args.rate - elapsed
                if wait > 0:
                    time.sleep(wait)
                futures.append(pool.submit(_one, port))
                sent += 1
            answered = sum(f.result() for f in futures)
        cpu = (tree_ticks(pid) - ticks0) / clock_ticks_per_s()
    finally:
        server.stop()
    wall = time.monotonic() - started
    print(f"gunicorn floor: {answered} of {sent} requests answered 200 in {wall:.1f} s ({args.workers} sync workers, "
          f"access log on); gunicorn CPU {cpu:.2f} s = {1000 * cpu / max(answered, 1):.3f} ms a request, "
          f"{2000 * cpu / max(answered, 1):.2f} ms a judgment (next + submit); load average {os.getloadavg()[0]:.2f}")
    return 0 if answered == sent else 1


if __name__ == "__main__":
    sys.exit(main())
