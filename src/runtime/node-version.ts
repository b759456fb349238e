/**
 * Imported first by every entry point: on an unsupported Node the process stops at once with
 * a message naming the version found and the one needed, before any module that relies on
 * newer runtime behaviour is loaded. The project brings Node 24 itself (the `node` package:
 * npm scripts run `node_modules/.bin/node`), so this fires only when started by another Node.
 */
export const REQUIRED_NODE_MAJOR = 24;

const found = process.versions.node;
if (Number(found.split('.')[0]) < REQUIRED_NODE_MAJOR) {
  process.stderr.write(
    `Unsupported Node.js ${found}: this project needs Node ${REQUIRED_NODE_MAJOR} (LTS) or newer. ` +
      'Start it through npm (`npm start`, `npm test`), which runs the Node 24 that `npm install` put in node_modules/.bin, ' +
      `or install Node ${REQUIRED_NODE_MAJOR}.\n`,
  );
  process.exit(1);
}
