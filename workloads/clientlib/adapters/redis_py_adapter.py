"""redline client adapter for redis-py's RedisCluster (protocol 1).

Reads one JSON object per line on stdin, writes one per line on stdout
(see workloads/clientlib/PROTOCOL.md). The first line in is the hello with
the seeds and the timeout; the answer names the library and its version.
Every later line is an op: its "cmd" runs through RedisCluster.execute_command
on a pool of threads, one shared client as a service would have, and each
completion is written as soon as the library returns, in any order.

redis-py is used with its defaults except the timeouts (socket_timeout and
socket_connect_timeout = the run's op timeout). Its own retries are watched,
not changed: every send of the op's command on any node connection is
counted (Connection.send_command), and how each ended (parse_response).
"""

import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import redis
from redis import exceptions
from redis.cluster import ClusterNode, RedisCluster

out_lock = threading.Lock()
local = threading.local()


def write(obj):
    line = json.dumps(obj, separators=(",", ":"))
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


# --- watching the library's sends -------------------------------------------
_send = redis.connection.Connection.send_command
_parse = redis.client.Redis.parse_response


def send_command(self, *args, **kwargs):
    op = getattr(local, "op", None)
    if op is not None and [str(a) for a in args] == op:
        local.attempts.append({"node": "%s:%s" % (self.host, self.port), "outcome": None})
    return _send(self, *args, **kwargs)


def parse_response(self, connection, command_name, **options):
    try:
        return _parse(self, connection, command_name, **options)
    except BaseException as e:
        op = getattr(local, "op", None)
        if op is not None and local.attempts and local.attempts[-1]["outcome"] is None and command_name == op[0]:
            local.attempts[-1]["outcome"] = outcome_of(e)
        raise


redis.connection.Connection.send_command = send_command
redis.client.Redis.parse_response = parse_response


def outcome_of(e):
    """fail: the command certainly did not run; info: it may have."""
    if isinstance(e, (exceptions.TimeoutError, exceptions.ConnectionError)):
        return "info"
    if isinstance(e, (exceptions.ResponseError, exceptions.RedisClusterException)):
        return "fail"
    return "info"


def plain(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, (set, frozenset, list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bool):
        return int(v)
    return v


def run(client, op):
    cmd = op["cmd"]
    local.op = cmd
    local.attempts = []
    start = time.monotonic()
    done = {"id": op["id"]}
    args = list(cmd)
    if args[0].upper() in ("EVAL", "EVALSHA"):
        args[2] = int(args[2])  # RedisCluster finds the keys by this count
    try:
        reply = client.execute_command(*args)
        done["type"] = "ok"
        done["value"] = plain(reply)
    except BaseException as e:  # the library's last word, whatever it is
        done["type"] = outcome_of(e)
        done["error"] = ("%s: %s" % (type(e).__name__, e))[:200]
    finally:
        local.op = None
    done["elapsed_ms"] = (time.monotonic() - start) * 1000.0
    attempts = local.attempts
    if attempts:
        done["node"] = attempts[-1]["node"]
        if len(attempts) > 1:
            done["attempts"] = len(attempts)
        done["resent"] = sum(1 for a in attempts[:-1] if a["outcome"] in ("info", None))
        if done["type"] == "fail" and done["resent"] > 0:
            # An earlier send may have applied it: unknown, not failed.
            done["type"] = "info"
            done["error"] += " (after an earlier attempt of unknown outcome)"
    write(done)


def main():
    hello = json.loads(sys.stdin.readline())
    timeout = hello.get("timeout_ms", 1000) / 1000.0
    nodes = []
    for s in hello["seeds"]:
        host, port = s.rsplit(":", 1)
        nodes.append(ClusterNode(host, int(port)))
    try:
        client = RedisCluster(startup_nodes=nodes, socket_timeout=timeout, socket_connect_timeout=timeout,
                              username=hello.get("username") or None, password=hello.get("password") or None)
    except BaseException as e:
        write({"type": "error", "error": "RedisCluster: %s: %s" % (type(e).__name__, e)})
        return 1
    write({
        "type": "hello", "protocol": 1, "library": "redis-py RedisCluster", "version": redis.__version__,
        "language": "python %d.%d" % sys.version_info[:2],
        "retries": "cluster_error_retry_attempts 3 (the default): after a ConnectionError or TimeoutError it resends "
                   "the command up to 4 more times to the same node (0.25 s apart), then reinitializes and repeats the "
                   "whole op up to 3 times, so one write may be sent up to 15 times; also resends on ClusterDownError, "
                   "TRYAGAIN and follows MOVED/ASK",
        "replica_reads": False,
        "sees": "every send of an op (Connection.send_command) and how it ended, the node of the last send",
    })
    pool = ThreadPoolExecutor(max_workers=max(1, hello.get("concurrency", 1)) + 2)
    for line in sys.stdin:
        line = line.strip()
        if line:
            pool.submit(run, client, json.loads(line))
    pool.shutdown(wait=True)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
