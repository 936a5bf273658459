"""`clustersim view DIR [DIR2 ...]`: write the page to a file, or serve it on loopback and open the browser."""

from __future__ import annotations

import argparse
import http.server
import sys
import threading
import webbrowser
from pathlib import Path

from clustersim._io.extras import require
from clustersim.view.runs import read_run, run_directories, with_owners


def run_command(args: argparse.Namespace) -> int:
    require("bokeh", "view", "clustersim view")
    from clustersim.view.page import build_page

    runs = [read_run(d) for directory in args.directories for d in run_directories(Path(directory))]
    if args.workload is not None:
        from clustersim.workload.load import load_workload

        owners = {job.id: job.user for job in load_workload(args.workload).jobs}
        runs = [with_owners(run, owners) for run in runs]
    html = build_page(runs).encode("utf-8")
    if args.html is not None:
        args.html.write_bytes(html)
        print(f"wrote {args.html} ({len(html) / 1e6:.1f} MB)", file=sys.stderr)
        return 0
    server = serve(html)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"serving {url} (Ctrl-C stops)", file=sys.stderr, flush=True)
    if not args.no_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def serve(html: bytes) -> http.server.ThreadingHTTPServer:
    """A loopback server on a free port answering every GET with the page (it has no other resource)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)


def serve_in_background(html: bytes) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve the page from a daemon thread (for tests and notebooks); returns the server and its URL."""
    server = serve(html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
