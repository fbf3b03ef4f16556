// jake-bot's web page: a snapshot and then every change arrive over one
// server-sent event stream; changes are drawn once per animation frame,
// so a reply streams as fast as the CLI writes without redrawing per event.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (id) => document.getElementById(id);
const state = { channels: [], byID: new Map(), current: null, dirty: new Set(), full: true };
const drawn = new Map(); // message id -> {el, text, choices}

// ---- Markdown ---------------------------------------------------------

function esc(s) {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function inline(s) {
  let out = "";
  for (const part of s.split(/(`[^`\n]+`)/)) {
    if (part.length > 1 && part.startsWith("`") && part.endsWith("`")) {
      out += "<code>" + esc(part.slice(1, -1)) + "</code>";
      continue;
    }
    out += esc(part)
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^\w*])\*([^*\s][^*]*?)\*(?!\w)/g, "$1<em>$2</em>")
      .replace(/(^|[^\w])_([^_\s][^_]*?)_(?!\w)/g, "$1<em>$2</em>")
      .replace(/~~([^~]+)~~/g, "<del>$1</del>")
      .replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2" target="_blank" rel="noopener noreferrer">$1</a>');
  }
  return out;
}

const keywords = new Set(("func return if else for range var const let function def class import package from type struct " +
  "interface go defer switch case break continue while new true false nil null None True False async await export " +
  "public private static fn pub mut impl use match select chan map err self this try catch finally raise throw").split(" "));

function unifiedDiff(code) {
  return code.split("\n").map((l) => {
    const cls = l.startsWith("+") ? "diff-add" : l.startsWith("-") ? "diff-del" : l.startsWith("@@") ? "diff-hunk" : "";
    return cls ? `<span class="${cls}">${esc(l)}</span>` : esc(l) + "\n";
  }).join("");
}

// sideBySide lays a unified diff out in two columns, the old text left
// and the new right, a run of removed lines beside the run added for it.
function sideBySide(code) {
  const rows = [];
  let del = [], add = [];
  const flush = () => {
    for (let i = 0; i < Math.max(del.length, add.length); i++) {
      const l = del[i], r = add[i];
      rows.push(`<tr><td class="${l === undefined ? "" : "diff-del"}">${esc(l ?? "")}</td>` +
        `<td class="${r === undefined ? "" : "diff-add"}">${esc(r ?? "")}</td></tr>`);
    }
    del = []; add = [];
  };
  for (const line of code.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@") || line.startsWith("diff ") || line.startsWith("index ")) {
      flush();
      rows.push(`<tr><td colspan="2" class="diff-hunk">${esc(line)}</td></tr>`);
    } else if (line.startsWith("-")) {
      del.push(line.slice(1));
    } else if (line.startsWith("+")) {
      add.push(line.slice(1));
    } else {
      flush();
      const text = esc(line.startsWith(" ") ? line.slice(1) : line);
      rows.push(`<tr><td>${text}</td><td>${text}</td></tr>`);
    }
  }
  flush();
  return `<table class="sbs"><tbody>${rows.join("")}</tbody></table>`;
}

function highlight(code, lang) {
  if (lang === "diff" || lang === "patch") return unifiedDiff(code);
  const hash = /^(py|python|sh|bash|shell|yaml|yml|ruby|rb|toml|make|dockerfile)$/.test(lang);
  const re = hash
    ? /(#[^\n]*)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_]\w*)\b/g
    : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`[^`]*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_]\w*)\b/g;
  let out = "", last = 0, m;
  while ((m = re.exec(code)) !== null) {
    out += esc(code.slice(last, m.index));
    if (m[1]) out += `<span class="tok-c">${esc(m[1])}</span>`;
    else if (m[2]) out += `<span class="tok-s">${esc(m[2])}</span>`;
    else if (m[3]) out += `<span class="tok-n">${esc(m[3])}</span>`;
    else out += keywords.has(m[4]) ? `<span class="tok-k">${esc(m[4])}</span>` : esc(m[4]);
    last = re.lastIndex;
  }
  return out + esc(code.slice(last));
}

function markdown(text) {
  const lines = text.split("\n");
  let html = "", para = [], list = null;
  const flush = () => {
    if (para.length) html += "<p>" + para.map(inline).join("<br>") + "</p>";
    para = [];
    if (list) html += `</${list}>`;
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i++) code.push(lines[i]);
      const lang = fence[2].toLowerCase();
      html += `<pre class="code"><code class="language-${esc(lang)}">${highlight(code.join("\n"), lang)}</code></pre>`;
      if (lang === "diff" || lang === "patch") html += sideBySide(code.join("\n"));
      continue;
    }
    let m;
    if ((m = line.match(/^(#{1,6})\s+(.*)/))) { flush(); html += `<h4>${inline(m[2])}</h4>`; continue; }
    if ((m = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)/))) {
      const kind = /\d/.test(m[1]) ? "ol" : "ul";
      if (para.length) { html += "<p>" + para.map(inline).join("<br>") + "</p>"; para = []; }
      if (list !== kind) { if (list) html += `</${list}>`; html += `<${kind}>`; list = kind; }
      html += `<li>${inline(m[2])}</li>`;
      continue;
    }
    if ((m = line.match(/^>\s?(.*)/))) { flush(); html += `<blockquote>${inline(m[1])}</blockquote>`; continue; }
    if (line.trim() === "") { flush(); continue; }
    if (list) { html += `</${list}>`; list = null; }
    para.push(line);
  }
  flush();
  return html;
}

// ---- Talking to jake-bot ----------------------------------------------

async function post(url, body, json = true) {
  const res = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: json ? { "Content-Type": "application/json", "X-CSRF-Token": csrf } : { "X-CSRF-Token": csrf },
    body: json ? JSON.stringify(body) : body,
  });
  if (!res.ok) throw new Error((await res.text()).trim() || res.statusText);
  return res.json();
}

async function ensureChannel() {
  if (state.current) return state.current;
  const { id } = await post("/api/channels", {});
  select(id);
  return id;
}

async function send(text) {
  try {
    const channel = await ensureChannel();
    const files = $("files").files;
    if (files.length) {
      const form = new FormData();
      form.append("channel", channel);
      form.append("text", text);
      for (const f of files) form.append("file", f, f.name);
      await post("/api/upload", form, false);
      $("files").value = "";
      $("attached").textContent = "";
    } else {
      await post("/api/messages", { channel, text });
    }
    setStatus("");
  } catch (e) {
    setStatus("Not sent: " + e.message);
  }
}

function setStatus(text) { $("status").textContent = text; $("attached").textContent = text; }

function connect() {
  const es = new EventSource("/api/events");
  es.onopen = () => { $("status").textContent = "connected"; };
  es.onerror = () => { $("status").textContent = "reconnecting…"; };
  es.onmessage = (e) => apply(JSON.parse(e.data));
}

function channel(id) {
  let c = state.byID.get(id);
  if (!c) {
    c = { id, title: "New conversation", messages: [] };
    state.byID.set(id, c);
    state.channels.push(c);
  }
  return c;
}

function apply(ev) {
  if (ev.type === "snapshot") {
    state.channels = [];
    state.byID.clear();
    for (const c of ev.channels || []) {
      const ch = channel(c.id);
      ch.title = c.title;
      ch.messages = c.messages || [];
    }
    if (!state.byID.has(state.current)) state.current = state.channels.length ? state.channels[state.channels.length - 1].id : null;
    state.full = true;
  } else if (ev.type === "channel") {
    channel(ev.channel.id).title = ev.channel.title;
    state.full = true;
  } else if (ev.type === "message") {
    const c = channel(ev.in);
    const i = c.messages.findIndex((m) => m.id === ev.message.id);
    if (i >= 0) c.messages[i] = ev.message; else c.messages.push(ev.message);
    if (ev.in === state.current) state.dirty.add(ev.message.id);
  } else if (ev.type === "append") {
    // A streaming reply's new end: only what it adds comes over the wire.
    const m = channel(ev.in).messages.find((m) => m.id === ev.id);
    if (m) m.text += ev.text;
    if (ev.in === state.current) state.dirty.add(ev.id);
  }
  schedule();
}

// ---- Drawing ----------------------------------------------------------

let frame = 0;
function schedule() { if (!frame) frame = requestAnimationFrame(draw); }

function select(id) {
  state.current = id;
  state.full = true;
  $("sidebar").classList.remove("open");
  schedule();
}

function drawMessage(m) {
  let d = drawn.get(m.id);
  if (!d) {
    const el = document.createElement("div");
    el.className = "msg " + m.from;
    el.dataset.id = m.id;
    d = { el, key: null };
    drawn.set(m.id, d);
    $("messages").appendChild(el);
  }
  const key = m.text + "\u0000" + JSON.stringify(m.choices || []) + JSON.stringify(m.file || null) + (m.mark || "");
  if (d.key === key) return;
  d.key = key;
  if (m.from === "user") d.el.textContent = m.text;
  else d.el.innerHTML = markdown(m.text);
  if (m.mark) {
    // The state of the message's turn, as a reaction shows it in a chat.
    const mark = document.createElement("span");
    mark.className = "mark";
    mark.textContent = m.mark;
    d.el.appendChild(mark);
  }
  if (m.file) {
    const a = document.createElement("a");
    a.href = "/api/files/" + encodeURIComponent(m.file.id);
    a.download = m.file.name;
    a.textContent = `📎 ${m.file.name} (${m.file.size} bytes)`;
    d.el.appendChild(a);
  }
  if (m.choices && m.choices.length) {
    const row = document.createElement("div");
    row.className = "choices";
    for (const c of m.choices) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = c.label;
      b.onclick = () => send(c.command);
      row.appendChild(b);
    }
    d.el.appendChild(row);
  }
}

function draw() {
  frame = 0;
  const box = $("messages");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  const c = state.byID.get(state.current);
  if (state.full) {
    state.full = false;
    state.dirty.clear();
    const list = $("channels");
    list.replaceChildren(...state.channels.slice().reverse().map((ch) => {
      const li = document.createElement("li");
      li.textContent = ch.title;
      li.dataset.id = ch.id;
      if (ch.id === state.current) li.className = "active";
      li.onclick = () => select(ch.id);
      return li;
    }));
    $("title").textContent = c ? c.title : "jake-bot";
    box.replaceChildren();
    drawn.clear();
    if (c) c.messages.forEach(drawMessage);
  } else if (c) {
    for (const m of c.messages) if (state.dirty.has(m.id)) drawMessage(m);
    state.dirty.clear();
  }
  if (atBottom) box.scrollTop = box.scrollHeight;
}

// ---- Wiring -----------------------------------------------------------

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text && !$("files").files.length) return;
  $("text").value = "";
  send(text);
});
$("text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("composer").requestSubmit();
  }
});
$("files").addEventListener("change", () => {
  $("attached").textContent = [...$("files").files].map((f) => "📎 " + f.name).join("  ");
});
// The start form: a new conversation place, then /<plugin> start there.
$("start").addEventListener("submit", async (e) => {
  e.preventDefault();
  const plugin = $("plugin").value;
  if (!plugin) return;
  const dir = $("workdir").value.trim();
  const text = `/${plugin} start${dir ? " " + dir : ""}${$("worktree").checked ? " --worktree" : ""}`;
  try {
    const { id } = await post("/api/channels", {});
    select(id);
    await post("/api/messages", { channel: id, text });
    $("workdir").value = "";
    setStatus("");
  } catch (err) { setStatus("Not started: " + err.message); }
});
$("new").onclick = async () => {
  try {
    const { id } = await post("/api/channels", {});
    select(id);
  } catch (e) { setStatus(e.message); }
};
$("stop").onclick = () => state.current && send("/stop");
$("resume").onclick = () => send("/resume");
$("menu").onclick = () => $("sidebar").classList.toggle("open");
connect();
