// Writes the Parquet shards of neardup's round-trip test with hyparquet-writer, an
// implementation independent of the Go library neardup uses: node write.mjs DIR.
// Shards: one per codec the writer supports here (snappy, gzip, none), each with a
// nested group, nulls and duplicates within and across shards; a shard whose text
// column is an integer; a shard cut short.
import { parquetWriteFile } from 'hyparquet-writer'
import { gzipSync } from 'node:zlib'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.argv[2]
const words = 'the quick brown fox jumps over a lazy dog while seven zebras graze near old mills and rivers'.split(' ')

// text returns a document of 60 words drawn from seed; equal seeds give equal texts.
function text(seed) {
  const out = []
  let x = seed * 2654435761 % 4294967296
  for (let i = 0; i < 60; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out.push(words[x % words.length] + (x % 7))
  }
  return out.join(' ')
}

const schema = [
  { name: 'root', num_children: 5 },
  { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'meta', repetition_type: 'OPTIONAL', num_children: 2 },
  { name: 'url', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'lang', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'n', type: 'INT64', repetition_type: 'REQUIRED' },
  { name: 'score', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
]

// shard returns the columns of 40 rows: every fifth text repeats one of an earlier
// shard's, every seventh one of this shard's, row 11 has a null text, some nulls elsewhere.
function shard(k) {
  const ids = [], texts = [], metas = [], ns = [], scores = []
  for (let i = 0; i < 40; i++) {
    let seed = k * 1000 + i
    if (i % 5 === 4 && k > 0) seed = (k - 1) * 1000 + i
    if (i % 7 === 6) seed = k * 1000 + i - 3
    ids.push(`s${k}-${i}`)
    texts.push(i === 11 ? null : text(seed))
    metas.push(i % 9 === 8 ? null : { url: `https://example.com/${k}/${i}`, lang: i % 2 ? 'en' : null })
    ns.push(BigInt(k * 100 + i))
    scores.push(i % 4 === 0 ? null : i / 4)
  }
  return [
    { name: 'id', data: ids }, { name: 'text', data: texts }, { name: 'meta', data: metas },
    { name: 'n', data: ns }, { name: 'score', data: scores },
  ]
}

const codecs = ['SNAPPY', 'GZIP', 'UNCOMPRESSED']
codecs.forEach((codec, k) => {
  parquetWriteFile({
    filename: join(dir, `shard-${k}-${codec.toLowerCase()}.parquet`),
    columnData: shard(k), schema, codec, rowGroupSize: 16,
    compressors: { GZIP: b => new Uint8Array(gzipSync(b)) },
    kvMetadata: [{ key: 'writer', value: 'hyparquet-writer' }],
  })
})

parquetWriteFile({
  filename: join(dir, 'shard-8-wrong-type.parquet'),
  columnData: [{ name: 'id', data: ['w0', 'w1'], type: 'STRING' }, { name: 'text', data: [1, 2], type: 'INT32' }],
})

const whole = join(dir, 'whole.tmp')
parquetWriteFile({ filename: whole, columnData: shard(9), schema })
const bytes = readFileSync(whole)
writeFileSync(join(dir, 'shard-9-truncated.parquet'), bytes.subarray(0, Math.floor(bytes.length * 0.6)))
