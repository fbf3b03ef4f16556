package jsonscan_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

func TestObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{` { "a" : 1 , "b":"x\"}" ,"c":{"d":[1,{"e":"]"}]},"f":null,"g":true}`,
			map[string]string{"a": "1", "b": `"x\"}"`, "c": `{"d":[1,{"e":"]"}]}`, "f": "null", "g": "true"}},
		{`{"a":1,"b":"cut`, map[string]string{"a": "1"}},
		{`{"a":1 "b":2}`, map[string]string{"a": "1"}},
		{`{"a":[1,2}`, map[string]string{}},
		{`{"a":tru`, map[string]string{}},
		{`[1]`, map[string]string{}},
		{``, map[string]string{}},
	} {
		got := map[string]string{}
		for o := jsonscan.NewObject([]byte(tc.in)); o.Next(); {
			got[string(o.Key())] = string(o.Value())
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("Members(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestElements(t *testing.T) {
	t.Parallel()
	var got []string
	for e := range jsonscan.Elements([]byte(` [ 1, "a,b", {"c":[2]} , [] ] `)) {
		got = append(got, string(e))
	}
	if want := []string{"1", `"a,b"`, `{"c":[2]}`, "[]"}; !slices.Equal(got, want) {
		t.Errorf("Elements = %q, want %q", got, want)
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`{"a":1}`:           true,
		`{"a":"}"}`:         true,
		`{"a":1}x`:          false,
		`{"a":1`:            false,
		`{"a":"x\"}`:        false,
		`{"a":[1,{"b":2}]}`: true,
		`{"a":[1}`:          false,
		`[1]`:               false,
		``:                  false,
	} {
		if got := jsonscan.Complete([]byte(in)); got != want {
			t.Errorf("Complete(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`""`, `"plain"`, `"tab\there\nnew"`, `"q\"b\\s\/"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 pair"`,
		`"\ud83d lone"`, `"\b\f\r"`, `"héllo"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := jsonscan.String([]byte(in)); !ok || got != want {
			t.Errorf("String(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`"\x"`, `"\u12"`, `x`, `"`, `"a\"`} {
		if got, ok := jsonscan.String([]byte(in)); ok {
			t.Errorf("String(%s) = %q, want not ok", in, got)
		}
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	if n, ok := jsonscan.Int([]byte("6086")); !ok || n != 6086 {
		t.Errorf("Int(6086) = %d, %v", n, ok)
	}
	if _, ok := jsonscan.Int([]byte("1.5")); ok {
		t.Error("Int(1.5) is ok, want not")
	}
	if f, ok := jsonscan.Float([]byte("-2.5e3")); !ok || f != -2500 {
		t.Errorf("Float(-2.5e3) = %g, %v", f, ok)
	}
	if _, ok := jsonscan.Float([]byte(`"1"`)); ok {
		t.Error(`Float("1") is ok, want not`)
	}
}

func FuzzWalk(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[{"c":"d\"e"}],"f":{"g":null}}`, `{"a":"\ud83d\ude00"}`, `{"a":[`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		complete := jsonscan.Complete(data)
		if complete && json.Valid(data) {
			// Every member of a valid object is found, with encoding/json's
			// string values.
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			n := 0
			for o := jsonscan.NewObject(data); o.Next(); {
				n++
				// Keys come as written; decode them to compare.
				k, _ := jsonscan.String([]byte(`"` + string(o.Key()) + `"`))
				v := o.Value()
				var want string
				if json.Unmarshal(v, &want) == nil {
					if got, ok := jsonscan.String(v); !ok || got != want {
						t.Errorf("String(%s) = %q, %v; want %q", v, got, ok, want)
					}
				}
				if _, ok := m[k]; !ok {
					t.Errorf("member %q is not in %s", k, data)
				}
			}
			if n < len(m) {
				t.Errorf("Members found %d of %d members in %s", n, len(m), data)
			}
		}
		for o := jsonscan.NewObject(data); o.Next(); {
		}
		for range jsonscan.Elements(data) {
		}
		jsonscan.StringField(data, "a")
	})
}
