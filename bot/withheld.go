package bot

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// What the CLIs never see: the bot's own secrets and credential files,
// kept out of their environment and out of the allowed roots.

// WithheldVars are the variables no CLI sees: the secrets jakebot itself
// consumes (platform tokens, signing and webhook secrets). A CLI's own
// credentials, such as ANTHROPIC_API_KEY, are not among them.
func WithheldVars() []string {
	var out []string
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		f := t.Field(i)
		if cliSettingsIndex(f.Type) != nil {
			continue
		}
		for _, fs := range envFields(reflect.StructOf([]reflect.StructField{f}), "") {
			for _, field := range fs {
				if core.SecretName(field.key) {
					out = append(out, field.key)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// withheldPrefixes start the names of the platforms', NATS's and the
// bot's own variables: a secret-looking one (a name with TOKEN, SECRET,
// PASSWORD, KEY...) is withheld even when jakebot does not read it, as
// SLACK_SIGNING_SECRET.
func withheldPrefixes() []string {
	out := []string{"NATS_", "JAKEBOT_"}
	for _, p := range BuiltinPlatforms {
		out = append(out, p.EnvPrefix)
	}
	return out
}

// credentialFiles name the files that hold the bot's own credentials, by
// the variable that points at each: withheld like the secrets (the path is
// the way to the secret), and refused inside the allowed roots.
func (cfg Config) credentialFiles() map[string]string {
	return map[string]string{
		"NATS_CREDS":  cfg.NATS.Creds,
		"NATS_NKEY":   cfg.NATS.NkeySeed,
		"NATS_KEY":    cfg.NATS.Key,
		"WEB_TLS_KEY": cfg.Web.TLSKey,
	}
}

// Withheld reports whether no CLI may see variable k: it is one of
// WithheldVars, points at one of the bot's credential files (NATS_CREDS,
// NATS_NKEY, NATS_KEY, WEB_TLS_KEY), or is a secret-looking variable
// starting with one of withheldPrefixes.
func Withheld(k string) bool {
	if slices.Contains(WithheldVars(), k) {
		return true
	}
	if _, ok := (Config{}).credentialFiles()[k]; ok {
		return true
	}
	for _, prefix := range withheldPrefixes() {
		if strings.HasPrefix(k, prefix) && core.SecretName(k) {
			return true
		}
	}
	return false
}

// childEnv is the environment of every CLI: environ, then the variables
// only .env sets, without the withheld ones.
func childEnv(environ []string, fileVars map[string]string) []string {
	out := make([]string, 0, len(environ)+len(fileVars))
	seen := map[string]bool{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		seen[k] = true
		if !Withheld(k) {
			out = append(out, kv)
		}
	}
	var fromFile []string
	for k, v := range fileVars {
		if !seen[k] && !Withheld(k) {
			fromFile = append(fromFile, k+"="+v)
		}
	}
	slices.Sort(fromFile)
	return append(out, fromFile...)
}

// CheckSecretFiles refuses files that hold the bot's own secrets inside an
// allowed root, where any agent could read them: .env when it sets a
// withheld variable (a model API key alone does not count: the CLI gets
// it anyway), the credential files (NATS_CREDS, NATS_NKEY, NATS_KEY,
// WEB_TLS_KEY), the state file (the conversations' session ids and
// always-allowed tools) and the audit log.
func (cfg Config) CheckSecretFiles(roots core.Roots) error {
	type file struct{ path, what, fix string }
	var files []file
	if cfg.Dotenv != "" && len(cfg.DotenvWithheld) > 0 {
		files = append(files, file{cfg.Dotenv, ".env, which sets " + strings.Join(cfg.DotenvWithheld, ", "),
			"move those variables to the environment or run jakebot from a directory outside ALLOWED_ROOTS"})
	}
	creds := cfg.credentialFiles()
	for _, name := range slices.Sorted(maps.Keys(creds)) {
		if path := creds[name]; path != "" {
			files = append(files, file{path, name, "move it, and " + name + ", to a path outside them"})
		}
	}
	if cfg.StateFile != "" && cfg.StateFile != "off" {
		files = append(files, file{cfg.StateFile, "STATE_FILE", "set STATE_FILE to a path outside them (or off)"})
	}
	if cfg.AuditLog != "" {
		files = append(files, file{cfg.AuditLog, "AUDIT_LOG", "set AUDIT_LOG to a path outside them"})
	}
	var msgs []string
	for _, f := range files {
		if real, ok := resolveFile(f.path); ok && roots.Contains(real) {
			msgs = append(msgs, fmt.Sprintf("%s (%s) is inside the allowed roots (%s), where every agent can read it: %s",
				f.what, real, strings.Join(roots, ", "), f.fix))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// resolveFile returns path absolute, with symlinks resolved as far as it
// exists: a file not yet created is where its directory says.
func resolveFile(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, true
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return abs, true
	}
	return filepath.Join(dir, filepath.Base(abs)), true
}
