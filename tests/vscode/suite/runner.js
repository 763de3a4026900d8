// A minimal test runner for the extension host: `test(name, fn)` registers, `run()` runs
// them in order with a per-test deadline, logs "ok"/"not ok" lines and a summary, writes
// the results to $SUITE_RESULTS, and rejects when one failed (VS Code then
// exits with code 1).
'use strict';
const fs = require('fs');

const tests = [];
const hooks = { before: [], after: [] };

function test(name, fn, { timeoutMs = 60000 } = {}) {
  tests.push({ name, fn, timeoutMs });
}
function before(fn) {
  hooks.before.push(fn);
}
function after(fn) {
  hooks.after.push(fn);
}

function deadline(ms, what) {
  let timer;
  const p = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return { p, cancel: () => clearTimeout(timer) };
}

async function run() {
  const results = [];
  const only = process.env.SUITE_ONLY ? new RegExp(process.env.SUITE_ONLY) : undefined;
  try {
    for (const h of hooks.before) await h();
    for (const t of tests) {
      if (only && !only.test(t.name)) continue;
      const started = Date.now();
      const d = deadline(t.timeoutMs, t.name);
      try {
        await Promise.race([t.fn(), d.p]);
        results.push({ name: t.name, ok: true, ms: Date.now() - started });
        console.log(`ok - ${t.name} (${Date.now() - started} ms)`);
      } catch (e) {
        results.push({ name: t.name, ok: false, ms: Date.now() - started, error: String(e && e.stack ? e.stack : e) });
        console.log(`not ok - ${t.name}: ${e && e.stack ? e.stack : e}`);
      } finally {
        d.cancel();
      }
    }
  } finally {
    for (const h of hooks.after) {
      try {
        await h();
      } catch (e) {
        console.log(`after: ${e}`);
      }
    }
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  if (process.env.SUITE_RESULTS) fs.writeFileSync(process.env.SUITE_RESULTS, JSON.stringify(results, null, 2));
  if (failed) throw new Error(`${failed} tests failed`);
}

module.exports = { test, before, after, run };
