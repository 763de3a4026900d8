// Runs inside VS Code's extension host (code-server), loaded through the
// extensionTestsPath payload: every test of tests/vscode/suite/*.test.js, in order.
'use strict';
const fs = require('fs');
const path = require('path');
const { run } = require('./runner');

exports.run = async function () {
  const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort();
  for (const f of files) require(path.join(__dirname, f));
  await run();
};
