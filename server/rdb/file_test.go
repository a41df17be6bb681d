package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// a small file: header, aux fields, a function, two databases, an expiry,
// EOF and checksum, as rdbSaveRio lays it out.
func sampleFile(checksum bool) []byte {
	b := AppendHeader(nil)
	b = AppendAux(b, "redis-ver", "7.0.15")
	b = AppendAux(b, "redis-bits", "64")
	b = AppendFunction(b, []byte("#!lua name=x\nredis.register_function('f', function() return 1 end)"))
	b = AppendSelectDB(b, 0)
	b = AppendResizeDB(b, 2, 1)
	b = append(b, TypeString)
	b = AppendString(b, []byte("k1"), false)
	b = AppendString(b, []byte("12345"), false)
	b = AppendExpireMs(b, 1700000000123)
	b = append(b, TypeString)
	b = AppendString(b, []byte("k2"), false)
	b = AppendString(b, bytes.Repeat([]byte("ab"), 100), true)
	b = AppendSelectDB(b, 3)
	b = AppendResizeDB(b, 1, 0)
	b = append(b, OpFreq, 7, TypeString)
	b = AppendString(b, []byte("k3"), false)
	b = AppendString(b, []byte("v"), false)
	return AppendEOF(b, checksum)
}

type seen struct {
	aux   map[string]string
	funcs int
	keys  []Entry
	vals  []string
}

func load(t *testing.T, data []byte, verify bool) (*seen, error) {
	t.Helper()
	s := &seen{aux: map[string]string{}}
	_, err := Load(data, verify, Loader{
		Aux:      func(k, v string) { s.aux[k] = v },
		Function: func(code []byte) error { s.funcs++; return nil },
		Key: func(e *Entry) error {
			if e.Type != TypeString {
				return errors.New("not a string")
			}
			v := e.R.String()
			s.keys = append(s.keys, Entry{DB: e.DB, Key: e.Key, Type: e.Type, ExpireMs: e.ExpireMs, Freq: e.Freq, Idle: e.Idle})
			s.vals = append(s.vals, string(v))
			return nil
		},
	})
	return s, err
}

func TestFileRoundTrip(t *testing.T) {
	s, err := load(t, sampleFile(true), true)
	if err != nil {
		t.Fatal(err)
	}
	if s.aux["redis-ver"] != "7.0.15" || s.aux["redis-bits"] != "64" || s.funcs != 1 || len(s.keys) != 3 {
		t.Fatalf("%+v", s)
	}
	k := s.keys
	if k[0].DB != 0 || string(k[0].Key) != "k1" || s.vals[0] != "12345" || k[0].ExpireMs != -1 ||
		k[1].ExpireMs != 1700000000123 || s.vals[1] != string(bytes.Repeat([]byte("ab"), 100)) ||
		k[2].DB != 3 || k[2].Freq != 7 || k[2].ExpireMs != -1 || k[1].Freq != -1 {
		t.Fatalf("%+v %q", k, s.vals)
	}
}

func TestFileChecksum(t *testing.T) {
	data := sampleFile(true)
	bad := append([]byte(nil), data...)
	i := bytes.Index(bad, []byte("k2"))
	bad[i] = 'j'
	if _, err := load(t, bad, true); !errors.Is(err, ErrChecksum) {
		t.Fatalf("a flipped byte: %v", err)
	}
	if _, err := load(t, bad, false); err != nil {
		t.Fatalf("rdbchecksum no: %v", err)
	}
	// A stored zero (saved with rdbchecksum no) is never checked.
	zero := sampleFile(false)
	if binary.LittleEndian.Uint64(zero[len(zero)-8:]) != 0 {
		t.Fatal("checksum off wrote a CRC")
	}
	zero[bytes.Index(zero, []byte("k2"))] = 'j'
	if _, err := load(t, zero, true); err != nil {
		t.Fatalf("zero checksum: %v", err)
	}
}

func TestFileRefusals(t *testing.T) {
	data := sampleFile(true)
	for name, f := range map[string][]byte{
		"magic":     append([]byte("REDIX"), data[5:]...),
		"version":   append([]byte("REDIS0011"), data[9:]...),
		"truncated": data[:len(data)-12],
		"module":    AppendEOF(append(AppendHeader(nil), TypeModule2, 1, 'k'), true),
		"moduleaux": AppendEOF(append(AppendHeader(nil), OpModuleAux, 1), true),
	} {
		if _, err := load(t, f, true); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
