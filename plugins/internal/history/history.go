// Package history lists a CLI's past conversations from the CLI's own
// files: the heads of many files, read a few files at a time and each
// only as far as needed.
package history

import (
	"context"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/jake-bot/jake-bot/core"
)

// HeadSize is the most of a file that is read: a conversation's first
// prompt follows the CLI's context and instructions, tens of kilobytes
// into the file, more with a big instructions file.
const HeadSize = 256 << 10

// ReadFunc reads one file's head, using buf (HeadSize bytes, this
// goroutine's own) as scratch space. ok is false for a file that is not a
// conversation to list.
type ReadFunc func(path string, buf []byte) (info core.ConversationInfo, ok bool)

// Scan reads files with read, a few at a time, and returns the
// conversations found, in the files' order.
func Scan(ctx context.Context, files []string, read ReadFunc) ([]core.ConversationInfo, error) {
	infos := make([]core.ConversationInfo, len(files))
	found := make([]bool, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8, len(files)) {
		wg.Go(func() {
			buf := make([]byte, HeadSize)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) || ctx.Err() != nil {
					return
				}
				infos[i], found[i] = read(files[i], buf)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []core.ConversationInfo
	for i, ok := range found {
		if ok {
			out = append(out, infos[i])
		}
	}
	return out, nil
}

// SortNewest sorts conversations newest first; those updated at the same
// time by id, so that a listing's numbers are stable.
func SortNewest(infos []core.ConversationInfo) {
	sort.SliceStable(infos, func(i, j int) bool {
		if !infos[i].Updated.Equal(infos[j].Updated) {
			return infos[i].Updated.After(infos[j].Updated)
		}
		return infos[i].SessionID < infos[j].SessionID
	})
}

// steps are how far a head is read, step by step: most of what is looked
// for lies within the first 16 or 64 kilobytes.
var steps = [...]int{16 << 10, 64 << 10, HeadSize}

// ReadHead reads the start of r into buf step by step, calling look with
// all read so far and whether that is all there is to read, until look
// reports it is done or nothing is left.
func ReadHead(r io.Reader, buf []byte, look func(data []byte, end bool) (done bool)) {
	filled := 0
	for _, size := range steps {
		n, err := io.ReadFull(r, buf[filled:min(size, len(buf))])
		filled += n
		end := err != nil || size >= len(buf)
		if look(buf[:filled], end) || end {
			return
		}
	}
}
