package bot

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/plugins/claude"
)

// Config is everything jakebot reads from its environment. Every variable
// is documented in .env.example.
type Config struct {
	// AllowedRoots are the directories workdirs must stay inside; empty
	// means the directory jakebot starts in.
	AllowedRoots   []string      `env:"ALLOWED_ROOTS" envSeparator:","`
	DefaultWorkdir string        `env:"DEFAULT_WORKDIR"`
	TurnTimeout    time.Duration `env:"TURN_TIMEOUT" envDefault:"30m"`
	QueueLimit     int           `env:"QUEUE_LIMIT" envDefault:"5"`
	LogLevel       string        `env:"LOG_LEVEL" envDefault:"info"`
	// PluginsFile is a YAML file of further CLIs to run as plugins
	// (plugins/configured); empty means none.
	PluginsFile string `env:"PLUGINS_FILE"`

	Claude   claude.Config
	Slack    slack.Config
	Telegram telegram.Config
}

// LoadConfig reads the configuration from environ (os.Environ's form) and,
// when dotenv names a readable file, from it too; the real environment
// wins over the file.
func LoadConfig(environ []string, dotenv string) (Config, error) {
	vars := map[string]string{}
	if dotenv != "" {
		fileVars, err := readDotenv(dotenv)
		if err != nil && !os.IsNotExist(err) {
			return Config{}, err
		}
		for k, v := range fileVars {
			vars[k] = v
		}
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars}); err != nil {
		return Config{}, explain(err, vars)
	}
	if _, err := parseLevel(cfg.LogLevel); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// readDotenv reads KEY=VALUE lines; blank lines and # comments are
// skipped, and one pair of surrounding quotes is removed from a value.
func readDotenv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vars[strings.TrimSpace(k)] = v
	}
	return vars, sc.Err()
}

// explain names the variable behind each of the library's parse errors,
// which only name the struct field.
func explain(err error, vars map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	keys := envKeys(reflect.TypeOf(Config{}))
	var msgs []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			msgs = append(msgs, e.Error())
			continue
		}
		msg := e.Error()
		for _, key := range keys[pe.Name] {
			if v, ok := vars[key]; ok {
				msg = fmt.Sprintf("%s=%q: %v", key, v, pe.Err)
				break
			}
		}
		msgs = append(msgs, msg)
	}
	return fmt.Errorf("configuration: %s", strings.Join(msgs, "; "))
}

// envKeys maps each field name in t (and its nested structs) to the
// variables it is read from.
func envKeys(t reflect.Type) map[string][]string {
	keys := map[string][]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			for name, ks := range envKeys(f.Type) {
				keys[name] = append(keys[name], ks...)
			}
			continue
		}
		if key, _, _ := strings.Cut(f.Tag.Get("env"), ","); key != "" {
			keys[f.Name] = append(keys[f.Name], key)
		}
	}
	return keys
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", s)
	}
	return l, nil
}
