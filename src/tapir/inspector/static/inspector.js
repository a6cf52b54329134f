// Tapir inspector page: the live screen, its hierarchy, the document's elements on it, and the
// forms that edit the document. State comes over the websocket (/ws); actions and edits are JSON
// POSTs with the X-Tapir header (the server refuses changes without it). No framework, no CDN.
(function () {
  "use strict";

  var $ = function (id) { return document.getElementById(id); };
  var page = {
    state: null, nodes: {}, selected: null, hovered: null, details: null, mode: "select",
    doc: null, record: { on: false }, socket: null, shotSeq: null, lastDump: 0, formFor: null, hoveredElement: null
  };

  // ---------------------------------------------------------------------------------------------
  // helpers

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { e.textContent = attrs[k]; }
      else if (k === "cls") { e.className = attrs[k]; }
      else if (k.slice(0, 2) === "on") { e.addEventListener(k.slice(2), attrs[k]); }
      else if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) { e.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return e;
  }

  function toast(text, kind) {
    var t = el("div", { cls: "toast " + (kind || ""), text: text, role: "status" });
    $("toasts").appendChild(t);
    setTimeout(function () { t.remove(); }, kind === "error" ? 9000 : 4000);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Tapir": "1" },
      body: JSON.stringify(body || {})
    }).then(function (r) {
      return r.json().catch(function () { return { error: r.status + " " + r.statusText }; }).then(function (data) {
        if (!r.ok || data.error) {
          var err = new Error(data.error || r.statusText);
          err.problems = data.problems || [];
          throw err;
        }
        return data;
      });
    });
  }

  function methodOf(how) {
    if (!how) { return "identifier"; }
    if (how.indexOf("fuzzy") >= 0) { return "fuzzy"; }
    if (how.indexOf("embedding") >= 0) { return "embedding"; }
    return "identifier";
  }

  function pct(v, of) { return (100 * v / (of || 1)).toFixed(3) + "%"; }

  // ---------------------------------------------------------------------------------------------
  // the screen

  function boxFor(node, cls) {
    var s = page.state.size, b = node.bounds;
    var d = el("div", { cls: "box " + cls });
    d.style.left = pct(b[0], s[0]); d.style.top = pct(b[1], s[1]);
    d.style.width = pct(Math.max(0, b[2] - b[0]), s[0]); d.style.height = pct(Math.max(0, b[3] - b[1]), s[1]);
    return d;
  }

  function drawBoxes() {
    var boxes = $("boxes");
    boxes.replaceChildren();
    if (!page.state) { return; }
    page.state.elements.forEach(function (e) {
      (e.nodes || [e.node]).forEach(function (id, i) {
        var n = page.nodes[id];
        if (!n) { return; }
        var m = e.method === "fuzzy" ? "fuzzy" : e.method === "embedding" ? "embedding" : "identifier";
        // an element's label shows while it is hovered or selected: all at once they cover the screen
        var tagged = id === page.hovered || id === page.selected || e.name === page.hoveredElement;
        var b = boxFor(n, "el " + m + (n.bounds[1] < 40 ? " low" : "") + (tagged ? " tagged" : ""));
        b.dataset.element = e.name;
        if (i === 0) {
          var score = typeof e.score === "number" ? " " + e.score.toFixed(2) : "";
          b.appendChild(el("span", { cls: "tag", text: "$" + e.name.split("__")[1] + " · " + e.how + score }));
        }
        boxes.appendChild(b);
      });
    });
    if (page.selected !== null && page.nodes[page.selected]) { boxes.appendChild(boxFor(page.nodes[page.selected], "selected")); }
    if (page.hovered !== null && page.nodes[page.hovered]) { boxes.appendChild(boxFor(page.nodes[page.hovered], "hover")); }
  }

  function nodeAt(x, y) {
    var best = null;
    page.state.nodes.forEach(function (n) {
      var b = n.bounds;
      if (!n.visible || b[2] <= b[0] || b[3] <= b[1] || x < b[0] || x >= b[2] || y < b[1] || y >= b[3]) { return; }
      var area = (b[2] - b[0]) * (b[3] - b[1]);
      if (!best || area < best.area || (area === best.area && n.depth > best.n.depth)) { best = { n: n, area: area }; }
    });
    return best ? best.n : null;
  }

  function pointer(event) {
    var r = $("phone").getBoundingClientRect(), s = page.state.size;
    return [Math.floor((event.clientX - r.left) / r.width * s[0]), Math.floor((event.clientY - r.top) / r.height * s[1])];
  }

  function setHover(id) {
    if (page.hovered === id) { return; }
    page.hovered = id;
    drawBoxes();
    document.querySelectorAll(".row.hover").forEach(function (r) { r.classList.remove("hover"); });
    if (id !== null) {
      var row = document.querySelector('.row[data-id="' + id + '"]');
      if (row) { row.classList.add("hover"); row.scrollIntoView({ block: "nearest" }); }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // the hierarchy

  function informative(n) {
    return n.text || n.desc || n.rid || n.flags.some(function (f) {
      return ["clickable", "long-clickable", "checkable", "scrollable", "editable"].indexOf(f) >= 0;
    });
  }

  function drawTree() {
    var tree = $("tree"), all = $("all-views").checked, claims = page.state.claims || {};
    var elements = {};
    page.state.elements.forEach(function (e) { elements[e.name] = e; });
    var rows = [];
    function walk(id, depth) {
      var n = page.nodes[id];
      if (!n) { return; }
      var shown = all || (n.visible && (informative(n) || claims[id]));
      if (!all && !n.visible) { return; }
      if (shown) {
        var parts = [el("span", { cls: "cls", text: n.cls || "View" })];
        if (n.rid) { parts.push(el("span", { cls: "rid", text: "#" + n.rid })); }
        if (n.text) { parts.push(el("span", { cls: "txt", text: JSON.stringify(n.text.length > 48 ? n.text.slice(0, 45) + "…" : n.text) })); }
        if (n.desc && n.desc !== n.text) { parts.push(el("span", { cls: "flag", text: "desc=" + JSON.stringify(n.desc) })); }
        var flags = n.flags.filter(function (f) { return f !== "focused"; });
        if (flags.length) { parts.push(el("span", { cls: "flag", text: "[" + flags.join(",") + "]" })); }
        (claims[id] || []).forEach(function (name) {
          var e = elements[name];
          var item = e && (e.nodes || []).indexOf(id) >= 0 && e.node !== id && e.kind === "list";
          parts.push(el("span", { cls: "chip " + (item ? "item" : methodOf(e && e.how)), text: (item ? "item of $" : "$") + name.split("__")[1],
            title: "$" + name + (e ? " · " + e.how : "") }));
        });
        var row = el("div", { cls: "row" + (n.visible ? "" : " invisible") + (page.selected === id ? " selected" : ""),
          "data-id": id, role: "treeitem", "data-search": (n.cls + " " + n.rid + " " + n.text + " " + n.desc).toLowerCase() }, parts);
        row.style.paddingLeft = (10 + depth * 14) + "px";
        rows.push(row);
      }
      n.children.forEach(function (c) { walk(c, shown ? depth + 1 : depth); });
    }
    page.state.nodes.forEach(function (n) { if (n.parent === null) { walk(n.id, 0); } });
    tree.replaceChildren.apply(tree, rows);
    applyFilter();
  }

  function applyFilter() {
    var words = $("tree-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    document.querySelectorAll("#tree .row").forEach(function (r) {
      var text = r.getAttribute("data-search");
      r.classList.toggle("filtered-out", !words.every(function (w) { return text.indexOf(w) >= 0; }));
    });
  }

  // ---------------------------------------------------------------------------------------------
  // the screen identified, and its elements

  function drawScreen() {
    var s = page.state, name = $("screen-name");
    name.textContent = s.screen.name ? s.screen.name : "no screen of the document matches";
    name.classList.toggle("none", !s.screen.name);
    var grounded = s.elements.length, total = grounded + s.absent.length;
    var facts = [];
    if (s.screen.name) {
      facts.push("confidence " + s.screen.score.toFixed(2) + (s.screen.confident ? "" : " (not confident)"));
      facts.push(grounded + " of " + total + " elements ground");
    }
    facts.push(s.package || "?");
    facts.push("dump #" + s.seq);
    $("screen-facts").textContent = facts.join(" · ");

    var list = $("elements");
    list.replaceChildren.apply(list, s.elements.map(function (e) {
      var m = methodOf(e.how);
      var score = typeof e.score === "number" ? " " + e.score.toFixed(2) : "";
      var li = el("li", { "data-element": e.name }, [
        el("span", { cls: "name", text: "$" + e.name }),
        el("span", { cls: "kind", text: e.kind + (e.items !== null && e.items !== undefined ? " · " + e.items + " items" : "") }),
        el("span", { cls: "badge " + m, text: e.how + score })
      ]);
      if (e.sensitive) { li.firstChild.appendChild(el("span", { cls: "badge sensitive", text: "sensitive" })); }
      li.addEventListener("mouseenter", function () { page.hoveredElement = e.name; setHover(e.node); });
      li.addEventListener("mouseleave", function () { page.hoveredElement = null; setHover(null); });
      li.addEventListener("click", function () { select(e.node); });
      return li;
    }));
    var absent = $("absent");
    $("absent-head").hidden = !s.absent.length;
    absent.replaceChildren.apply(absent, s.absent.map(function (e) {
      return el("li", { "data-element": e.name }, [el("span", { cls: "name", text: "$" + e.name }), el("span", { cls: "kind", text: e.kind })]);
    }));
    var cands = $("candidates");
    var others = s.screen.candidates.filter(function (c) { return c[0] !== s.screen.name; });
    $("candidates-head").hidden = !others.length;  // no heading over an empty list
    cands.replaceChildren.apply(cands, others.map(function (c) {
      return el("li", { text: c[0] + " " + c[1].toFixed(2) });
    }));
  }

  function onScreen(state) {
    var previous = page.state && page.selected !== null ? page.nodes[page.selected] : null;
    page.state = state;
    page.nodes = {};
    state.nodes.forEach(function (n) { page.nodes[n.id] = n; });
    page.lastDump = Date.now();
    page.hovered = null;
    // keep the selection on the same view when the screen changed around it
    var keep = null;
    if (previous) {
      state.nodes.forEach(function (n) {
        if (keep === null && n.cls === previous.cls && n.rid === previous.rid && n.text === previous.text &&
            n.desc === previous.desc && n.bounds.join() === previous.bounds.join()) { keep = n.id; }
      });
    }
    page.selected = keep;
    $("phone").classList.add("stale");
    drawScreen();
    fitPhone();
    drawTree();
    drawBoxes();
    if (keep !== null) { loadView(keep); } else { showView(null); }
  }

  // The phone keeps the screen's proportions and fits the pane's height, so that the boxes (in
  // percent of the screen) lie on the screenshot and the whole screen shows without scrolling.
  function fitPhone() {
    var s = page.state ? page.state.size : null, phone = $("phone");
    if (!s || !s[0] || !s[1]) { return; }
    var pane = phone.parentElement, style = getComputedStyle(pane), used = 0, count = 0;
    Array.prototype.forEach.call(pane.children, function (c) {
      if (c !== phone && c.offsetParent !== null) { used += c.offsetHeight; count += 1; }
    });
    var gap = parseFloat(style.rowGap) || 0;
    var room = pane.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - used - gap * count - 2;
    var width = Math.min(pane.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 2,
      Math.max(200, room) * s[0] / s[1]);
    phone.style.width = Math.floor(width) + "px";
    phone.style.height = Math.floor(width * s[1] / s[0]) + "px";
  }
  window.addEventListener("resize", fitPhone);

  function onShot(message) {
    if (!page.state || message.seq !== page.state.seq) { return; }
    if (message.error) {
      $("shot-missing").hidden = false;
      $("shot-missing").textContent = "no screenshot: " + message.error;
      return;
    }
    var img = $("shot");
    img.onload = function () { $("phone").classList.remove("stale"); $("shot-missing").hidden = true; };
    img.src = "/api/shot/" + message.seq;
    page.shotSeq = message.seq;
  }

  // ---------------------------------------------------------------------------------------------
  // one view

  function select(id) {
    page.selected = id;
    document.querySelectorAll(".row.selected").forEach(function (r) { r.classList.remove("selected"); });
    var row = document.querySelector('.row[data-id="' + id + '"]');
    if (row) { row.classList.add("selected"); row.scrollIntoView({ block: "nearest" }); }
    drawBoxes();
    selectTab("view");
    loadView(id);
  }

  function loadView(id) {
    var seq = page.state.seq;
    fetch("/api/view/" + seq + "/" + id, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (d) {
      if (d.error) { if (page.state.seq === seq) { toast(d.error, "error"); } return; }
      if (page.state.seq !== seq || page.selected !== id) { return; }
      showView(d);
    });
  }

  function elementNames() {
    var names = [];
    (page.doc ? page.doc.screens : []).forEach(function (s) { s.elements.forEach(function (e) { names.push(e); }); });
    return names;
  }

  function showView(d) {
    page.details = d;
    $("view").hidden = !d;
    $("view-empty").hidden = !!d;
    if (!d) { return; }
    $("view-label").textContent = d.label;
    var claims = $("view-claims");
    var rows = d.claimed_by.map(function (c) {
      var row = el("div", { cls: "claim" + (c.other_screen ? " other" : "") }, [
        el("span", { cls: "name mono", text: "$" + c.element }),
        el("span", { cls: "badge " + methodOf(c.how), text: c.item ? "an item of this list" : c.how + (typeof c.score === "number" ? " " + c.score.toFixed(2) : "") })
      ]);
      if (!c.item && !c.other_screen) {
        row.appendChild(el("button", { type: "button", text: "Mark sensitive", title: "Write sensitive: true for $" + c.element,
          onclick: function () { markSensitive(c.element); } }));
      }
      return row;
    });
    if (!rows.length) {
      rows.push(el("div", { cls: "claim none" }, [el("span", { text: "No element of the document claims this view." })]));
    }
    if (d.in_item) {
      rows.push(el("div", { cls: "claim other" }, [el("span", { text: "Inside an item of " }), el("span", { cls: "name mono", text: "$" + d.in_item.list })]));
    }
    claims.replaceChildren.apply(claims, rows);

    var names = elementNames();
    var idents = $("identifiers");
    idents.replaceChildren.apply(idents, d.identifiers.map(function (i) {
      var count = i.unique ? "unique" : i.matches + " view" + (i.matches === 1 ? "" : "s") + (i.finds_it ? "" : ", not this one");
      var pick = el("select", { "aria-label": "element to add this identifier to" }, [el("option", { value: "", text: "add to element…" })].concat(
        names.map(function (n) { return el("option", { value: n, text: "$" + n }); })));
      var claimed = d.claimed_by.filter(function (c) { return !c.item && !c.other_screen; })[0];
      if (claimed) { pick.value = claimed.element; }
      var add = el("button", { type: "button", text: "Add", disabled: !i.unique ? "disabled" : null,
        title: i.unique ? "Append this identifier to the element's queue" : "only identifiers that select just this view can be added",
        onclick: function () { if (pick.value) { addIdentifier(pick.value, i.xpath); } else { toast("Choose the element first.", "error"); } } });
      var copy = el("button", { type: "button", text: "Copy", onclick: function () {
        if (navigator.clipboard) { navigator.clipboard.writeText(i.xpath); toast("Copied."); }
      } });
      return el("li", { cls: "ident " + (i.unique ? "unique" : "many") }, [
        el("code", { text: i.xpath }),
        el("span", { cls: "count", text: count }),
        el("div", { cls: "tools" }, [el("span", { cls: "scope", text: i.scope === "item" ? "within the item" : "on the screen" }), pick, add, copy])
      ]);
    }));
    if (!d.identifiers.length) { idents.appendChild(el("li", { cls: "muted small", text: "No property of this view identifies it (no id, text or description)." })); }

    var attrs = $("attributes");
    attrs.replaceChildren.apply(attrs, Object.keys(d.attributes).filter(function (k) {
      var v = d.attributes[k]; return v !== "" && v !== false;
    }).map(function (k) {
      return el("tr", {}, [el("td", { text: k }), el("td", { text: String(d.attributes[k]) })]);
    }));
    // a new dump of the same view (the screen changed around it, the document was edited) keeps
    // what the person typed into the form and the last edit's result
    var key = d.label + " " + d.attributes.bounds;
    if (page.formFor === key) { fillElementFormKeep(); } else { fillElementForm(d); }
    page.formFor = key;
  }

  function fillElementForm(d) {
    var s = d.suggestion;
    var screens = $("el-screen");
    screens.replaceChildren.apply(screens, (page.doc ? page.doc.screens : []).map(function (sc) {
      return el("option", { value: sc.name, text: sc.name });
    }));
    screens.value = s.screen;
    $("el-prefix").textContent = s.screen + "__";
    $("el-name").value = s.name;
    $("el-kind").value = s.kind;
    $("el-description").value = s.description;
    $("el-sensitive").checked = !!s.sensitive;
    $("el-sensitive-why").textContent = s.sensitive_reason ? "(it says “" + s.sensitive_reason + "”)" : "";
    var lists = page.state.elements.filter(function (e) { return e.kind === "list"; });
    var itemOf = $("el-item-of");
    itemOf.replaceChildren.apply(itemOf, [el("option", { value: "", text: "(no list)" })].concat(lists.map(function (e) {
      return el("option", { value: e.name, text: "$" + e.name });
    })));
    itemOf.value = s.item_of || "";
    $("el-item-row").hidden = !lists.length;
    var box = $("el-identifiers");
    var scope = s.item_of ? "item" : "screen";
    var offered = d.identifiers.filter(function (i) { return i.unique && i.scope === scope; });
    box.replaceChildren.apply(box, offered.map(function (i, n) {
      return el("label", {}, [el("input", { type: "checkbox", value: i.xpath, checked: n < 2 ? "checked" : null }), el("code", { text: i.xpath })]);
    }));
    if (!offered.length) { box.appendChild(el("p", { cls: "muted small", text: "No identifier selects just this view here: pick a more specific view." })); }
    $("el-add").disabled = !offered.length;
    $("el-result").textContent = "";
  }

  // ---------------------------------------------------------------------------------------------
  // actions and edits

  function act(action, extra) {
    var body = Object.assign({ action: action, seq: page.state ? page.state.seq : null }, extra || {});
    return post("/api/act", body).then(function (r) {
      if (r.recorded && r.recorded.length) { toast("Recorded: " + r.recorded.join("\n"), "ok"); }
    }).catch(function (e) { toast(e.message, "error"); });
  }

  function showProblems(title, problems) {
    toast(title + (problems && problems.length ? "\n" + problems.join("\n") : ""), "error");
  }

  function addIdentifier(element, xpath) {
    post("/api/identifier", { element: element, xpath: xpath }).then(function (r) {
      toast("Added to $" + element + " (" + r.where + ")", "ok");
    }).catch(function (e) { showProblems(e.message, e.problems); });
  }

  function markSensitive(element) {
    post("/api/sensitive", { element: element, sensitive: true }).then(function (r) {
      toast("$" + element + " is sensitive now (" + r.where + ")", "ok");
    }).catch(function (e) { showProblems(e.message, e.problems); });
  }

  $("element-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var identifiers = Array.prototype.slice.call(document.querySelectorAll("#el-identifiers input:checked")).map(function (i) { return i.value; });
    var body = {
      screen: $("el-screen").value, name: $("el-name").value.trim(), kind: $("el-kind").value,
      description: $("el-description").value, identifiers: identifiers, item_of: $("el-item-of").value || null,
      sensitive: $("el-sensitive").checked
    };
    var result = $("el-result");
    result.className = "small"; result.textContent = "adding…";
    post("/api/element", body).then(function (r) {
      result.className = "small ok"; result.textContent = "Added $" + body.screen + "__" + body.name + " at " + r.where;
      toast(r.what + " (" + r.where + ")", "ok");
    }).catch(function (e) {
      result.className = "small err"; result.textContent = e.message;
      showProblems(e.message, e.problems);
    });
  });
  $("el-screen").addEventListener("change", function () { $("el-prefix").textContent = $("el-screen").value + "__"; });
  $("el-item-of").addEventListener("change", function () {
    if (page.details) { page.details.suggestion.item_of = $("el-item-of").value || null; fillElementFormKeep(); }
  });
  function fillElementFormKeep() {
    var result = $("el-result");
    var keep = { name: $("el-name").value, kind: $("el-kind").value, description: $("el-description").value,
      screen: $("el-screen").value, result: result.textContent, resultClass: result.className };
    fillElementForm(page.details);
    $("el-name").value = keep.name; $("el-kind").value = keep.kind; $("el-description").value = keep.description;
    $("el-screen").value = keep.screen; $("el-prefix").textContent = keep.screen + "__";
    result.textContent = keep.result; result.className = keep.resultClass;
  }

  document.querySelectorAll("[data-view-act]").forEach(function (b) {
    b.addEventListener("click", function () {
      if (page.selected === null) { return; }
      act(b.getAttribute("data-view-act"), { node: page.selected, direction: b.getAttribute("data-direction") || "down" });
    });
  });
  $("type-form").addEventListener("submit", function (event) {
    event.preventDefault();
    if (page.selected === null) { return; }
    act("type", { node: page.selected, text: $("type-text").value });
  });
  document.querySelectorAll("[data-act]").forEach(function (b) {
    b.addEventListener("click", function () { act(b.getAttribute("data-act")); });
  });

  // ---------------------------------------------------------------------------------------------
  // recording

  function drawRecord(r) {
    page.record = r;
    var button = $("record-toggle");
    button.setAttribute("aria-pressed", String(!!r.on));
    $("record-label").textContent = r.on ? "Stop recording" : "Record";
    if (r.on) {
      $("record-where").textContent = "Recording" + (r.output ? " to " + r.output : " (kept in this session: stop to get the script)") +
        ": " + r.steps.length + " action" + (r.steps.length === 1 ? "" : "s") + " so far.";
      $("script").textContent = r.script;
    }
  }
  $("record-toggle").addEventListener("click", function () {
    var on = page.record && page.record.on;
    post("/api/record", { action: on ? "stop" : "start" }).then(function (r) {
      if (on) {
        $("record-where").textContent = "Recording stopped. The script:";
        $("script").textContent = r.script;
      }
      selectTab("recording");
    }).catch(function (e) { toast(e.message, "error"); });
  });

  // ---------------------------------------------------------------------------------------------
  // the document

  function drawDocument(d) {
    page.doc = d;
    $("app").textContent = d.app + " (" + d.package + ")";
    $("app").title = d.path || "";
    var box = $("doc-problems");
    box.hidden = !d.problems.length;
    box.replaceChildren();
    if (d.problems.length) {
      box.appendChild(el("strong", { text: (d.path || "the document") + " has problems:" }));
      d.problems.forEach(function (p) { box.appendChild(el("pre", { text: p })); });
    }
  }

  // ---------------------------------------------------------------------------------------------
  // tabs, modes, pointer

  function selectTab(name) {
    document.querySelectorAll(".tabs button").forEach(function (b) { b.setAttribute("aria-selected", String(b.getAttribute("data-tab") === name)); });
    document.querySelectorAll(".tab").forEach(function (t) { t.hidden = t.id !== "tab-" + name; });
  }
  document.querySelectorAll(".tabs button").forEach(function (b) {
    b.addEventListener("click", function () { selectTab(b.getAttribute("data-tab")); });
  });
  document.querySelectorAll(".mode").forEach(function (b) {
    b.addEventListener("click", function () {
      page.mode = b.getAttribute("data-mode");
      document.querySelectorAll(".mode").forEach(function (m) { m.setAttribute("aria-pressed", String(m === b)); });
      $("phone").classList.toggle("tap-mode", page.mode === "tap");
    });
  });
  $("show-elements").addEventListener("change", function () { $("boxes").classList.toggle("hide-elements", !this.checked); });
  $("all-views").addEventListener("change", function () { if (page.state) { drawTree(); } });
  $("tree-filter").addEventListener("input", applyFilter);

  $("phone").addEventListener("mousemove", function (event) {
    if (!page.state) { return; }
    var p = pointer(event), n = nodeAt(p[0], p[1]);
    setHover(n ? n.id : null);
  });
  $("phone").addEventListener("mouseleave", function () { setHover(null); });
  $("phone").addEventListener("click", function (event) {
    if (!page.state) { return; }
    var p = pointer(event), n = nodeAt(p[0], p[1]);
    if (!n) { return; }
    if (page.mode === "tap") { act("tap", { node: n.id }); } else { select(n.id); }
  });
  $("tree").addEventListener("mouseover", function (event) {
    var row = event.target.closest(".row");
    if (row) { setHover(Number(row.getAttribute("data-id"))); }
  });
  $("tree").addEventListener("mouseleave", function () { setHover(null); });
  $("tree").addEventListener("click", function (event) {
    var row = event.target.closest(".row");
    if (row) { select(Number(row.getAttribute("data-id"))); }
  });

  // ---------------------------------------------------------------------------------------------
  // the live connection

  function status(text, kind) {
    $("status").className = "status " + (kind || "");
    $("status-text").textContent = text;
  }

  setInterval(function () {
    if (page.lastDump) {
      var s = Math.round((Date.now() - page.lastDump) / 1000);
      $("dump-age").textContent = "screen changed " + (s < 2 ? "just now" : s + " s ago");
    }
  }, 1000);

  function connect() {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" + location.search;
    var socket = new WebSocket(url);
    page.socket = socket;
    socket.onopen = function () { status("live", "live"); };
    socket.onclose = function () {
      status("disconnected: reconnecting…", "down");
      setTimeout(connect, 2000);
    };
    socket.onmessage = function (event) {
      var m = JSON.parse(event.data);
      if (m.type === "hello") {
        $("device").textContent = m.device || "";
        drawDocument(m.document);
        drawRecord(m.record);
        if (m.state) { onScreen(m.state); if (m.shot) { onShot({ seq: m.state.seq }); } }
      } else if (m.type === "screen") {
        onScreen(m.state);
      } else if (m.type === "shot") {
        onShot(m);
      } else if (m.type === "document") {
        drawDocument(m.document);
      } else if (m.type === "record") {
        drawRecord(m.record);
      } else if (m.type === "notice") {
        toast(m.text, m.level === "error" ? "error" : "");
      }
      window.tapirInspector = { seq: page.state ? page.state.seq : null, messages: (window.tapirInspector ? window.tapirInspector.messages : 0) + 1 };
    };
  }
  connect();
})();
