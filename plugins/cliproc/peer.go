package cliproc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ErrNoPeerCheck is returned by ConnFromTree where the processes behind a
// connection cannot be looked up (outside Linux).
var ErrNoPeerCheck = errors.New("the process behind a connection is found only on Linux")

// ConnFromTree reports, nil or why not, whether the TCP connection on
// this machine from client to server (a loopback server of this process)
// is held by process root or one of its descendants: the connection's
// socket (its client end's inode, in /proc/net/tcp or tcp6) is open in
// one of their /proc/<pid>/fd. A process cannot choose its parent, so no
// other process passes, whatever it read of root's (its environment). An
// orphan that left the tree (reparented to the bot, a child subreaper)
// does not pass either. It fails closed: an error when /proc does not
// tell. Safe for concurrent use.
func ConnFromTree(root int, client, server netip.AddrPort) error {
	if runtime.GOOS != "linux" {
		return ErrNoPeerCheck
	}
	inode, err := socketInode(client.Addr().Unmap(), client.Port(), server)
	if err != nil {
		return err
	}
	tree := descendantsOf(root)
	if len(tree) == 0 {
		return fmt.Errorf("process %d has ended", root)
	}
	link := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	var unreadable error
	for _, pid := range tree {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				unreadable = err
			}
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + fd.Name()); err == nil && l == link {
				return nil
			}
		}
	}
	if unreadable != nil {
		return fmt.Errorf("the connection's process is not found: %w", unreadable)
	}
	return fmt.Errorf("the connection from %s is not of process %d nor of any process it started", client, root)
}

// descendantsOf lists root and every process descending from it, root
// first; nothing when root has ended.
func descendantsOf(root int) []int {
	children := map[int][]int{}
	alive := false
	eachProcess(func(st procStat) bool {
		children[st.ppid] = append(children[st.ppid], st.pid)
		alive = alive || st.pid == root
		return true
	})
	if !alive {
		return nil
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// socketInode finds the inode of the TCP socket whose local end is
// addr:port and remote end server, in /proc/net/tcp and tcp6 (where an
// IPv4 address may be written mapped).
func socketInode(addr netip.Addr, port uint16, server netip.AddrPort) (uint64, error) {
	client := netip.AddrPortFrom(addr, port)
	server = netip.AddrPortFrom(server.Addr().Unmap(), server.Port())
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if errors.Is(err, fs.ErrNotExist) && table == "/proc/net/tcp6" {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return 0, fmt.Errorf("the connection's socket: %w", err)
		}
		_, rows, _ := bytes.Cut(data, []byte{'\n'})
		for row := range strings.Lines(string(rows)) {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(row)
			if len(f) < 10 {
				continue
			}
			local, okL := procAddr(f[1])
			remote, okR := procAddr(f[2])
			if okL && okR && local == client && remote == server {
				return strconv.ParseUint(f[9], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("the connection from %s is in neither /proc/net/tcp nor tcp6", client)
}

// procAddr reads an address of /proc/net/tcp: the address's 32-bit words
// in hex as the machine stores them, a colon, the port in hex.
func procAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}
