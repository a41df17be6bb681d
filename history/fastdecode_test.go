package history

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The fast decoder gives exactly what encoding/json gives, or declines.
func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	lines := []string{
		`{"index":0,"time":2493028,"process":9,"type":"invoke","f":"add","key":"redline:6e1227dd:counter:1","value":1}`,
		`{"index":27602,"time":3178549980,"process":2097154,"type":"ok","f":"read","key":"k","value":7278,"node":"10.221.214.3:6379"}`,
		`{"index":5,"time":6,"process":"nemesis","type":"info","f":"final-reads"}`,
		`{"index":5,"time":6,"process":1,"type":"fail","f":"write","key":"k","value":[1,2,{"a":"b}"}],"error":"CLUSTERDOWN The cluster is down","redirects":2}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","value":null}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","value":"a \"quoted\" \\ string"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","value":-12.5e3}`,
		` { "index" : 1 , "time" : 2 , "process" : 3 , "type" : "ok" , "f" : "read" } `,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","key":"caf\u00e9"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","key":"café"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","Key":"upper-case field name"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","key":"a","key":"b"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"wait","wait":{"want":1,"acked":0}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{"acked":-1 , "want":2},"redirects":1}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":null}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{"want":1,"Acked":1}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{"want":1,"other":1}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{"want":1.5}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"add","wait":{"want":1,}}`,
		`{"index":1,"time":2,"process":"nemesis","type":"invoke","f":"start-pause","nodes":["n1"],"detail":{"mode":"one"}}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","unknown":[1,2]}`,
		`{"index":1.5,"time":2,"process":3,"type":"ok","f":"read"}`,
		`{"index":01,"time":2,"process":3,"type":"ok","f":"read"}`,
		`{"index":99999999999999999999,"time":2,"process":3,"type":"ok","f":"read"}`,
		`{"index":1,"time":2,"process":-1,"type":"ok","f":"read"}`,
		`{"index":1,"time":2,"process":"other","type":"ok","f":"read"}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","value":tru}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","value":[1,2}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read",}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read"} trailing`,
		`{}`,
		`{"index":1,"time":2,"process":3,"type":"ok","f":"read","error":"tab	inside"}`,
	}
	for _, l := range lines {
		var want Op
		wantErr := json.Unmarshal([]byte(l), &want)
		var got Op
		d := newLineDecoder()
		if !d.decode([]byte(strings.TrimSpace(l)), &got) {
			continue // declined: encoding/json decides
		}
		if wantErr != nil {
			t.Errorf("%s: fast decoder accepted what encoding/json refuses (%v)", l, wantErr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nfast %+v\njson %+v", l, got, want)
		}
	}
	// The common lines must take the fast path.
	for _, l := range append(lines[:4:4], lines[12], lines[13]) { // and the lines with a WAIT
		var op Op
		if !newLineDecoder().decode([]byte(l), &op) {
			t.Errorf("fast path declined a recorder line: %s", l)
		}
	}
}

// Values from the slab cannot be overwritten through a neighbour.
func TestFastDecodeValuesIndependent(t *testing.T) {
	d := newLineDecoder()
	var a, b Op
	d.decode([]byte(`{"index":1,"time":1,"process":1,"type":"ok","f":"r","value":[1]}`), &a)
	d.decode([]byte(`{"index":2,"time":1,"process":1,"type":"ok","f":"r","value":[2]}`), &b)
	_ = append(a.Value, 'x')
	if string(b.Value) != "[2]" || string(a.Value) != "[1]" {
		t.Fatalf("a=%s b=%s", a.Value, b.Value)
	}
}
