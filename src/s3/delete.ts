import { createHash } from "node:crypto";
import { drain, textOf, type Call, type S3Requester } from "./request.js";
import { childText, children, escapeXml, xmlRoot } from "./xml.js";

/** Deleting objects: one key (DeleteObject), or up to 1,000 in one request (DeleteObjects). */

export interface DeleteFailure {
  key: string;
  code: string;
  message: string;
}

/**
 * Deletes up to 1,000 keys in one request; returns the per-key failures.
 * S3 requires a checksum of the document: Content-MD5, which every
 * S3-compatible server we know accepts (some take nothing else).
 */
export async function deleteObjects(s3: S3Requester, bucket: string, keys: string[], call: Call = {}): Promise<DeleteFailure[]> {
  const objects = keys.map((key) => `<Object><Key>${escapeXml(key)}</Key></Object>`).join("");
  const body = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${objects}<Quiet>true</Quiet></Delete>`, "utf8");
  const headers = { "content-type": "application/xml", "content-md5": createHash("md5").update(body).digest("base64") };
  const response = await s3.send({ operation: "DeleteObjects", method: "POST", bucket, query: { delete: "" }, headers, body, payload: "document" }, call);
  const text = await textOf(response);
  const result = xmlRoot(text, "DeleteResult");
  if (!result) throw new Error("DeleteObjects answered with a document that is not a DeleteResult");
  return children(result, "Error").map((e) => {
    const code = childText(e, "Code") || "Error";
    return { key: childText(e, "Key") ?? "", code, message: childText(e, "Message") || code || "delete failed" };
  });
}

export async function deleteObject(s3: S3Requester, bucket: string, key: string, call: Call = {}): Promise<void> {
  await drain(await s3.send({ operation: "DeleteObject", method: "DELETE", bucket, key }, call));
}
