// Package images reads the images a user sent (core.Turn.Images) for the
// CLIs that take them inline, as base64 content blocks.
package images

import (
	"encoding/base64"
	"net/http"
	"os"
)

// MaxBytes is the largest image passed inline: the model APIs refuse
// bigger ones, and the file stays named in the prompt for the agent to
// read itself.
const MaxBytes = 5 << 20

// Image is one image, ready for a content block.
type Image struct {
	Path string
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string
	// Base64 is the file's bytes, standard base64.
	Base64 string
}

// Load reads paths. A file that cannot be read, is too large or is not in
// a format the models take is left out: it is still named in the prompt.
func Load(paths []string) []Image {
	var out []Image
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxBytes {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		switch mt := http.DetectContentType(data); mt {
		case "image/png", "image/jpeg", "image/gif", "image/webp":
			out = append(out, Image{Path: p, MediaType: mt, Base64: base64.StdEncoding.EncodeToString(data)})
		}
	}
	return out
}
