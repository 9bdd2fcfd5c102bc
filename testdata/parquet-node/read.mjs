// Reads Parquet files with hyparquet, an implementation independent of the Go library
// neardup uses, and prints for each its schema, its column chunks' codecs, its key-value
// metadata and its rows as JSON (64-bit integers as strings): node read.mjs FILE...
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const out = {}
for (const path of process.argv.slice(2)) {
  const file = await asyncBufferFromFile(path)
  const metadata = await parquetMetadataAsync(file)
  const rows = await parquetReadObjects({ file, compressors })
  out[path] = {
    schema: metadata.schema.map(({ name, type, repetition_type, converted_type, num_children }) =>
      ({ name, type, repetition_type, converted_type, num_children })),
    codecs: [...new Set(metadata.row_groups.flatMap(g => g.columns.map(c => c.meta_data.codec)))],
    kv: metadata.key_value_metadata ?? [],
    rows,
  }
}
console.log(JSON.stringify(out, (k, v) => typeof v === 'bigint' ? v.toString() : v))
