// redline client adapter for node-redis's createCluster (protocol 1).
//
// Reads one JSON object per line on stdin, writes one per line on stdout
// (see workloads/clientlib/PROTOCOL.md). The first line in is the hello with
// the seeds and the timeout; the answer names the library and its version.
// Every later line is an op: its "cmd" goes through cluster.sendCommand on
// one shared cluster client, and each completion is written as soon as the
// library settles it, in any order (the event loop runs them concurrently).
//
// node-redis is used with its defaults except connectTimeout (= the run's
// op timeout). node-redis 4.5 has no command timeout: a command waits while
// its node's socket is down (offline queue) and is sent when it reconnects.
// The adapter gives up waiting after the op timeout and reports info (the
// command may still be sent later, which info allows).
'use strict';

const readline = require('readline');
const { createCluster } = require('redis');

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// CRC16 (XMODEM) key slot, with hash tags, as Redis Cluster computes it.
function keyslot(key) {
  const s = key.indexOf('{');
  if (s >= 0) {
    const e = key.indexOf('}', s + 1);
    if (e > s + 1) key = key.substring(s + 1, e);
  }
  let crc = 0;
  for (const b of Buffer.from(key)) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

function plain(v) {
  if (Buffer.isBuffer(v)) return v.toString();
  if (Array.isArray(v)) return v.map(plain);
  return v === undefined ? null : v;
}

// fail: the command certainly did not run (an error reply of the server,
// or the library refusing before sending); info: it may have.
function outcomeOf(err) {
  if (err && err.constructor && err.constructor.name === 'ErrorReply') return 'fail';
  return 'info';
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  const lines = rl[Symbol.asyncIterator]();
  const first = await lines.next();
  const hello = JSON.parse(first.value);
  const timeout = hello.timeout_ms || 1000;
  const defaults = { socket: { connectTimeout: timeout } };
  if (hello.username) defaults.username = hello.username;
  if (hello.password) defaults.password = hello.password;
  const cluster = createCluster({
    rootNodes: hello.seeds.map((s) => ({ url: 'redis://' + s })),
    defaults,
  });
  cluster.on('error', (err) => process.stderr.write('cluster error: ' + err + '\n'));
  try {
    await cluster.connect();
  } catch (err) {
    write({ type: 'error', error: 'createCluster: ' + err });
    process.exit(1);
  }
  let version = 'unknown';
  try {
    version = require('redis/package.json').version;
  } catch (_) { /* keep unknown */ }
  write({
    type: 'hello', protocol: 1, library: 'node-redis createCluster', version,
    language: 'node ' + process.version,
    retries: 'follows MOVED/ASK up to maxCommandRedirections 16 (the default); never resends a command after a ' +
      'connection error, but a command issued while its node is disconnected waits in the offline queue and is sent ' +
      'when it reconnects (possibly long after the adapter reported info); no command timeout (the adapter stops waiting ' +
      'after the op timeout)',
    replica_reads: false,
    sees: 'the final result; node: the library\'s master for the key\'s slot when the op completed',
  });

  const inflight = new Set();
  const run = async (op) => {
    const start = process.hrtime.bigint();
    const done = { id: op.id };
    let timer;
    try {
      const reply = await Promise.race([
        cluster.sendCommand(op.key, op.readonly, op.cmd),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout: no reply within ' + timeout + ' ms (adapter)')), timeout);
        }),
      ]);
      done.type = 'ok';
      done.value = plain(reply);
    } catch (err) {
      done.type = outcomeOf(err);
      done.error = String(err && err.message ? err.message : err).substring(0, 200);
    } finally {
      clearTimeout(timer);
    }
    try {
      // A slot's master is {id, client}; the client knows its socket.
      const m = cluster.getSlotMaster(keyslot(op.key));
      const so = m && m.client && m.client.options && m.client.options.socket;
      if (so && so.host) done.node = so.host + ':' + so.port;
    } catch (_) { /* no node known */ }
    done.elapsed_ms = Number(process.hrtime.bigint() - start) / 1e6;
    write(done);
  };
  for (;;) {
    const next = await lines.next();
    if (next.done) break;
    const line = next.value.trim();
    if (!line) continue;
    const p = run(JSON.parse(line));
    inflight.add(p);
    p.finally(() => inflight.delete(p));
  }
  await Promise.allSettled([...inflight]);
  try {
    await cluster.disconnect();
  } catch (_) { /* exiting anyway */ }
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write('adapter: ' + (err && err.stack ? err.stack : err) + '\n');
  process.exit(1);
});
