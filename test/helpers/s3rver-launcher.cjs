/**
 * Starts s3rver (see s3-server.ts) with one fix applied to its source at load time:
 * s3rver 3.7.1 stops walking folders below a would-be common prefix before it has seen a key
 * in them, so a delimiter listing misses every common prefix that holds only deeper folders
 * (`e1/` of `e1/s1/a.md`), where S3 returns it. Dropping that early stop makes s3rver's own key
 * loop (which folds keys into common prefixes) see every key. The launcher refuses to start if
 * the snippet is no longer in s3rver, so an upgrade cannot silently drop or misapply the fix.
 *
 * Usage: node --openssl-legacy-provider s3rver-launcher.cjs <directory> <bucket>
 */
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const storePath = require.resolve('s3rver/lib/stores/filesystem.js');
const buggy = `        if (
          delimiterEnc &&
          dirPath.slice(prefixPath.length).indexOf(delimiterEnc) !== -1
        ) {
          // avoid directories occurring beneath a common prefix
          return false;
        }
`;
const source = fs.readFileSync(storePath, 'utf8');
if (!source.includes(buggy))
  throw new Error(`s3rver changed: the listing fix no longer applies to ${storePath}`);
const store = new Module(storePath, module);
store.filename = storePath;
store.paths = Module._nodeModulePaths(path.dirname(storePath));
store._compile(source.replace(buggy, ''), storePath);
store.loaded = true;
require.cache[storePath] = store;

const S3rver = require('s3rver');
const [directory, bucket] = process.argv.slice(2);
new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  configureBuckets: [{ name: bucket, configs: [] }],
})
  .run()
  .then(({ address, port }) => console.log(`S3rver listening on ${address}:${port}`))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
