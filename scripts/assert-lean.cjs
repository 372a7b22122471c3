// Stands in for node:assert where yargs imports it (its ESM platform shim,
// see scripts/bundle.mjs): yargs uses only strictEqual and notStrictEqual,
// for checks of its own invariants, and loading node:assert costs ~3 ms of
// every start-up. Same comparison (Object.is) and error code as node:assert.
"use strict";

function fail(message, fallback) {
  if (message instanceof Error) throw message;
  const err = new Error(message ?? fallback);
  err.name = "AssertionError";
  err.code = "ERR_ASSERTION";
  throw err;
}

exports.strictEqual = (actual, expected, message) => {
  if (!Object.is(actual, expected)) fail(message, `Expected values to be strictly equal: ${String(actual)} !== ${String(expected)}`);
};

exports.notStrictEqual = (actual, expected, message) => {
  if (Object.is(actual, expected)) fail(message, `Expected "actual" to be strictly unequal to: ${String(expected)}`);
};
