#!/usr/bin/env node
// The compiled CLI lives in dist/ (npm run build).
// The AWS SDK warns on every run that future releases will need Node 22;
// s3x pins an SDK release that supports Node 20, so the warning is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const { run } = await import("../dist/src/cli/main.js");
run();
