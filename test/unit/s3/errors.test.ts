import assert from "node:assert/strict";
import { describeFailure, errorFromText, xmlText } from "../../../src/s3/errors.js";

describe("s3/errors: S3 error documents", () => {
  it("decodes XML's five entities and numeric character references in Code and Message", () => {
    const err = errorFromText(400, {}, "<Error><Code>InvalidArgument</Code><Message>The key &apos;a&amp;b&apos; isn&#39;t &lt;valid&gt; &quot;here&quot; &#x263A;</Message></Error>");
    assert.equal(err.message, `The key 'a&b' isn't <valid> "here" ☺`);
    assert.match(describeFailure(err).message, /^InvalidArgument: The key 'a&b' isn't <valid> "here" ☺ \(HTTP 400\)$/);
  });

  it("decodes each entity once (&amp;lt; is the text &lt;) and leaves unknown ones as they are", () => {
    assert.equal(xmlText("&amp;lt; &nbsp; &#xFFFFFFF; plain"), "&lt; &nbsp; &#xFFFFFFF; plain");
    assert.equal(xmlText(undefined), undefined);
  });
});
