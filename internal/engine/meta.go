package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/neardup/neardup/store"
)

// detectorMeta is the meta record of a detector's store: the options that shape its
// keys and postings, which a store keeps for life.
type detectorMeta struct {
	Format      int      `json:"format"`
	Distance    int      `json:"distance"`
	Bands       int      `json:"bands"`
	Rows        int      `json:"rows"`
	MinHashK    int      `json:"minhash_k"`
	Seed        uint64   `json:"seed"`
	MinWords    int      `json:"min_words"`
	NoSimHash   bool     `json:"no_simhash,omitempty"`
	NoMinHash   bool     `json:"no_minhash,omitempty"`
	Unit        string   `json:"unit"`
	K           int      `json:"k"`
	Normalize   string   `json:"normalize"`
	StopWords   []string `json:"stop_words,omitempty"`
	ShingleSeed uint64   `json:"shingle_seed"`
	SampleMod   uint64   `json:"sample_mod,omitempty"`
}

// metaMagic starts the meta record; metaFormat is the version of the detector's layout
// of keys and records. Format 1 stores kept every band posting; format 2 ones keep them
// once the nsState marker says so, and a format 1 store becomes a format 2 one with the
// marker when it is opened.
const (
	metaMagic  = "NDDETECT"
	metaFormat = 2
)

// meta returns the meta record of the engine's config.
func (d *Engine) meta() detectorMeta {
	o, sh := &d.cfg, &d.cfg.Shingle
	unit, _ := sh.Unit.MarshalText()
	return detectorMeta{
		Format: metaFormat, Distance: o.Distance, Bands: d.bands, Rows: d.rows,
		MinHashK: o.MinHashK, Seed: o.Seed, MinWords: o.MinWords,
		NoSimHash: o.NoSimHash, NoMinHash: o.NoMinHash,
		Unit: string(unit), K: sh.K,
		Normalize: fmt.Sprintf("case=%t punct=%t accents=%t nfkc=%t cjk=%t numbers=%t stop=%t",
			!sh.KeepCase, !sh.KeepPunct, !sh.KeepAccents, !sh.NoNFKC, !sh.NoCJK, sh.MaskNumbers, sh.RemoveStopWords),
		StopWords: sh.StopWords, ShingleSeed: sh.Seed, SampleMod: sh.SampleMod,
	}
}

// checkMeta writes the meta record of an empty store, or compares the store's with the
// detector's options, bringing a format 1 store to format 2.
func (d *Engine) checkMeta() error {
	m := d.meta()
	want, err := json.Marshal(m)
	if err != nil {
		return err
	}
	want = append([]byte(metaMagic), want...)
	rec, ok, err := d.st.Record(metaID)
	if err != nil {
		return storeErr(err)
	}
	if !ok {
		var b store.Batch
		b.PutRecord(metaID, want)
		return storeErrOrNil(d.st.Apply(&b))
	}
	m.Format = 1
	old, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if bytes.Equal(rec, append([]byte(metaMagic), old...)) {
		var b store.Batch
		b.PutRecord(metaID, want)
		b.Add(nsState, bandsKey, 1)
		return storeErrOrNil(d.st.Apply(&b))
	}
	if !bytes.Equal(rec, want) {
		if !bytes.HasPrefix(rec, []byte(metaMagic)) {
			return fmt.Errorf("%w: the store holds no detector (no meta record); use an empty store", ErrOptions)
		}
		return fmt.Errorf("%w: the store was made with the options %s, these give %s: open it with the options it was made with, or use a new store",
			ErrOptions, rec[len(metaMagic):], want[len(metaMagic):])
	}
	return nil
}
