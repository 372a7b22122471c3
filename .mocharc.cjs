// Mocha adds files named on the command line to the configured spec instead of
// replacing it, so `npx mocha dist/test/unit/plan/keys.test.js` would run the
// whole suite. Here the default spec applies only when no test file or folder is named.
const named = process.argv.slice(2).some((arg) => /\.test\.js$|^dist\/test\/.*\/$|\*/.test(arg));
module.exports = {
  spec: named ? [] : ["dist/test/**/*.test.js"],
  require: ["dist/test/support/hooks.js"],
  timeout: 120000,
  reporter: "spec",
};
