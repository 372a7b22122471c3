// Stands in for "@smithy/node-http-handler" inside the bundle (see scripts/bundle.mjs).
// The SDK clients take two things from it when they load: NodeHttpHandler.create,
// which hands s3x's own request handler back untouched, and streamCollector,
// which the real module re-exports from @smithy/core. Loading the real module
// also loads node:https and node:http2 (~10 ms of every start); here it is
// loaded only when something builds an SDK handler of its own (a credential
// provider that fetches credentials over HTTP, say).
"use strict";
const { streamCollector } = require("@smithy/core/serde");

let real;
const load = () => (real ??= require("@smithy/node-http-handler/dist-cjs/index.js"));

class NodeHttpHandler {
  static create(instanceOrOptions) {
    if (typeof instanceOrOptions?.handle === "function") return instanceOrOptions;
    return load().NodeHttpHandler.create(instanceOrOptions);
  }

  constructor(options) {
    return new (load().NodeHttpHandler)(options);
  }
}

exports.streamCollector = streamCollector;
exports.NodeHttpHandler = NodeHttpHandler;
Object.defineProperty(exports, "NodeHttp2Handler", { enumerable: true, get: () => load().NodeHttp2Handler });
Object.defineProperty(exports, "DEFAULT_REQUEST_TIMEOUT", { enumerable: true, get: () => load().DEFAULT_REQUEST_TIMEOUT });
