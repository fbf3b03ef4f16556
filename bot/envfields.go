package bot

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// How Config's fields and the variables they are read from match, for
// naming the variable behind an error and for listing the secrets.

// explain names the variable behind each of the library's parse errors,
// which only name the struct field.
func explain(err error, vars map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	fields := envFields(reflect.TypeOf(Config{}), "")
	named := map[string]bool{}
	var msgs []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			msgs = append(msgs, e.Error())
			continue
		}
		msg := e.Error()
		// Several variables can share a field name (each plugin has Args,
		// each platform EditInterval), so the one meant is the first not
		// yet named whose value the field rejects.
		for _, f := range fields[pe.Name] {
			v, ok := vars[f.key]
			if ok && !named[f.key] && rejects(f.StructField, v) {
				named[f.key] = true
				msg = fmt.Sprintf("%s=%q: %v", f.key, v, pe.Err)
				break
			}
		}
		msgs = append(msgs, msg)
	}
	return fmt.Errorf("configuration: %s", strings.Join(msgs, "; "))
}

// envField is a field read from the variable key: its own name (envKey)
// after the envPrefix of each struct that holds it, as plugins' Settings
// are read as CLAUDE_ARGS, CODEX_ARGS...
type envField struct {
	key string
	reflect.StructField
}

// envFields maps each field name in t (and its nested structs) to the
// fields of that name that are read from a variable, whose names start
// with prefix.
func envFields(t reflect.Type, prefix string) map[string][]envField {
	fields := map[string][]envField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			for name, fs := range envFields(f.Type, prefix+f.Tag.Get("envPrefix")) {
				fields[name] = append(fields[name], fs...)
			}
			continue
		}
		if key := envKey(f); key != "" {
			fields[f.Name] = append(fields[f.Name], envField{prefix + key, f})
		}
	}
	return fields
}

func envKey(f reflect.StructField) string {
	key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
	return key
}

// rejects reports whether the library fails to parse value into f, by
// parsing it alone into a struct holding just a copy of f.
func rejects(f reflect.StructField, value string) bool {
	one := reflect.StructOf([]reflect.StructField{{Name: "V", Type: f.Type, Tag: f.Tag}})
	err := env.ParseWithOptions(reflect.New(one).Interface(), env.Options{Environment: map[string]string{envKey(f): value}})
	return err != nil
}
