// Renders each Markdown document of a JSON array read from stdin with marked and commonmark.js,
// both on their defaults (raw HTML passed through, no math, no sanitising), and writes
// [{"marked": html, "commonmark": html}, ...] to stdout: what a reader's tool would show.
"use strict";
const { marked } = require("marked");
const commonmark = require("commonmark");

const reader = new commonmark.Parser();
const writer = new commonmark.HtmlRenderer();
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const documents = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = documents.map((markdown) => ({
    marked: marked.parse(markdown),
    commonmark: writer.render(reader.parse(markdown)),
  }));
  process.stdout.write(JSON.stringify(out));
});
