#!/usr/bin/env node
// The compiled CLI lives in dist/ (npm run build).
import { run } from "../dist/src/cli/main.js";

run();
