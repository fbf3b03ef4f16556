package bot

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

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

	Claude claude.Config
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
		return Config{}, fmt.Errorf("configuration: %w", err)
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

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", s)
	}
	return l, nil
}
