#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build`: dist/s3x.mjs is the whole
// program bundled into one file (start-up reads one file instead of ~900),
// dist/src/ the plain compiled modules it falls back to.
// The AWS SDK warns on every run that future releases will need Node 22;
// s3x pins an SDK release that supports Node 20, so the warning is noise.
import { existsSync } from "node:fs";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const bundle = new URL("../dist/s3x.mjs", import.meta.url);
const { run } = await import(existsSync(bundle) ? bundle.href : "../dist/src/cli/main.js");
run();
