var __defProp = Object.defineProperty;
var __name = (target, value) => __defProp(target, "name", { value, configurable: true });

// ../build/index.js
import { WorkerEntrypoint as jt } from "cloudflare:workers";
import rt from "./05499335f1caba9dcdd6e341c13103a6ec615bd8-index_bg.wasm";
var Q = globalThis.__worker_init_state = { criticalError: false, instanceId: 0 };
var E = class {
  static {
    __name(this, "E");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, lt.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_containerstartupoptions_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  get enableInternet() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_containerstartupoptions_enableInternet(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t === 16777215 ? void 0 : t !== 0;
  }
  get entrypoint() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_containerstartupoptions_entrypoint(this.__wbg_ptr);
    } catch (n) {
      s(n);
    }
    var e = mt(t[0], t[1]);
    return i.__wbindgen_free(t[0], t[1] * 4, 4), e;
  }
  get env() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_containerstartupoptions_env(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t;
  }
  set enableInternet(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_containerstartupoptions_enableInternet(this.__wbg_ptr, u(t) ? 16777215 : t ? 1 : 0);
    } catch (e) {
      s(e);
    }
  }
  set entrypoint(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e = vt(t, i.__wbindgen_malloc), n = l;
    c();
    try {
      i.__wbg_set_containerstartupoptions_entrypoint(this.__wbg_ptr, e, n);
    } catch (_) {
      s(_);
    }
  }
  set env(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_containerstartupoptions_env(this.__wbg_ptr, t);
    } catch (e) {
      s(e);
    }
  }
};
Symbol.dispose && (E.prototype[Symbol.dispose] = E.prototype.free);
var x = class {
  static {
    __name(this, "x");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, X.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_globallimiter_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  alarm() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.globallimiter_alarm(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t;
  }
  connect(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.globallimiter_connect(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  fetch(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.globallimiter_fetch(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  constructor(t, e) {
    let n;
    c();
    try {
      n = i.globallimiter_new(t, e);
    } catch (_) {
      s(_);
    }
    return this.__wbg_ptr = n, Object.defineProperty(this, "__wbg_inst", { value: o, writable: true }), X.register(this, { ptr: n, instance: o }, this), this;
  }
  webSocketClose(t, e, n, _) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let a = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), f = l, b;
    c();
    try {
      b = i.globallimiter_webSocketClose(this.__wbg_ptr, t, e, a, f, _);
    } catch (w) {
      s(w);
    }
    return b;
  }
  webSocketError(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.globallimiter_webSocketError(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
  webSocketMessage(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.globallimiter_webSocketMessage(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
};
Symbol.dispose && (x.prototype[Symbol.dispose] = x.prototype.free);
var O = class {
  static {
    __name(this, "O");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, dt.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_intounderlyingbytesource_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  get autoAllocateChunkSize() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.intounderlyingbytesource_autoAllocateChunkSize(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t >>> 0;
  }
  cancel() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t = this.__destroy_into_raw();
    c();
    try {
      i.intounderlyingbytesource_cancel(t);
    } catch (e) {
      s(e);
    }
  }
  pull(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.intounderlyingbytesource_pull(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  start(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.intounderlyingbytesource_start(this.__wbg_ptr, t);
    } catch (e) {
      s(e);
    }
  }
  get type() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.intounderlyingbytesource_type(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return ut[t];
  }
};
Symbol.dispose && (O.prototype[Symbol.dispose] = O.prototype.free);
var P = class {
  static {
    __name(this, "P");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, ht.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_intounderlyingsink_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  abort(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e = this.__destroy_into_raw(), n;
    c();
    try {
      n = i.intounderlyingsink_abort(e, t);
    } catch (_) {
      s(_);
    }
    return n;
  }
  close() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t = this.__destroy_into_raw(), e;
    c();
    try {
      e = i.intounderlyingsink_close(t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  write(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.intounderlyingsink_write(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
};
Symbol.dispose && (P.prototype[Symbol.dispose] = P.prototype.free);
var T = class {
  static {
    __name(this, "T");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, pt.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_intounderlyingsource_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  cancel() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t = this.__destroy_into_raw();
    c();
    try {
      i.intounderlyingsource_cancel(t);
    } catch (e) {
      s(e);
    }
  }
  pull(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.intounderlyingsource_pull(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
};
Symbol.dispose && (T.prototype[Symbol.dispose] = T.prototype.free);
var v = class r {
  static {
    __name(this, "r");
  }
  static __wrap(t) {
    let e = Object.create(r.prototype);
    return e.__wbg_ptr = t, Object.defineProperty(e, "__wbg_inst", { value: o, writable: true }), Y.register(e, { ptr: t, instance: o }, e), e;
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, Y.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_minifyconfig_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  get css() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_minifyconfig_css(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t !== 0;
  }
  get html() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_minifyconfig_html(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t !== 0;
  }
  get js() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_minifyconfig_js(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t !== 0;
  }
  set css(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_minifyconfig_css(this.__wbg_ptr, t);
    } catch (e) {
      s(e);
    }
  }
  set html(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_minifyconfig_html(this.__wbg_ptr, t);
    } catch (e) {
      s(e);
    }
  }
  set js(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_minifyconfig_js(this.__wbg_ptr, t);
    } catch (e) {
      s(e);
    }
  }
};
Symbol.dispose && (v.prototype[Symbol.dispose] = v.prototype.free);
var j = class {
  static {
    __name(this, "j");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, yt.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_r2range_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  get length() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_r2range_length(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t[0] === 0 ? void 0 : t[1];
  }
  get offset() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_r2range_offset(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t[0] === 0 ? void 0 : t[1];
  }
  get suffix() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.__wbg_get_r2range_suffix(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t[0] === 0 ? void 0 : t[1];
  }
  set length(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_r2range_length(this.__wbg_ptr, !u(t), u(t) ? 0 : t);
    } catch (e) {
      s(e);
    }
  }
  set offset(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_r2range_offset(this.__wbg_ptr, !u(t), u(t) ? 0 : t);
    } catch (e) {
      s(e);
    }
  }
  set suffix(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    c();
    try {
      i.__wbg_set_r2range_suffix(this.__wbg_ptr, !u(t), u(t) ? 0 : t);
    } catch (e) {
      s(e);
    }
  }
};
Symbol.dispose && (j.prototype[Symbol.dispose] = j.prototype.free);
var S = class {
  static {
    __name(this, "S");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, Z.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_usersession_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  alarm() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.usersession_alarm(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t;
  }
  connect(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.usersession_connect(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  fetch(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.usersession_fetch(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  constructor(t, e) {
    let n;
    c();
    try {
      n = i.usersession_new(t, e);
    } catch (_) {
      s(_);
    }
    return this.__wbg_ptr = n, Object.defineProperty(this, "__wbg_inst", { value: o, writable: true }), Z.register(this, { ptr: n, instance: o }, this), this;
  }
  webSocketClose(t, e, n, _) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let a = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), f = l, b;
    c();
    try {
      b = i.usersession_webSocketClose(this.__wbg_ptr, t, e, a, f, _);
    } catch (w) {
      s(w);
    }
    return b;
  }
  webSocketError(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.usersession_webSocketError(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
  webSocketMessage(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.usersession_webSocketMessage(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
};
Symbol.dispose && (S.prototype[Symbol.dispose] = S.prototype.free);
var R = class {
  static {
    __name(this, "R");
  }
  __destroy_into_raw() {
    let t = this.__wbg_ptr;
    return this.__wbg_ptr = 0, tt.unregister(this), t;
  }
  free() {
    let t = this.__destroy_into_raw();
    c();
    try {
      i.__wbg_waitingroom_free(t, 0);
    } catch (e) {
      s(e);
    }
  }
  alarm() {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let t;
    c();
    try {
      t = i.waitingroom_alarm(this.__wbg_ptr);
    } catch (e) {
      s(e);
    }
    return t;
  }
  connect(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.waitingroom_connect(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  fetch(t) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let e;
    c();
    try {
      e = i.waitingroom_fetch(this.__wbg_ptr, t);
    } catch (n) {
      s(n);
    }
    return e;
  }
  constructor(t, e) {
    let n;
    c();
    try {
      n = i.waitingroom_new(t, e);
    } catch (_) {
      s(_);
    }
    return this.__wbg_ptr = n, Object.defineProperty(this, "__wbg_inst", { value: o, writable: true }), tt.register(this, { ptr: n, instance: o }, this), this;
  }
  webSocketClose(t, e, n, _) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let a = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), f = l, b;
    c();
    try {
      b = i.waitingroom_webSocketClose(this.__wbg_ptr, t, e, a, f, _);
    } catch (w) {
      s(w);
    }
    return b;
  }
  webSocketError(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.waitingroom_webSocketError(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
  webSocketMessage(t, e) {
    if (this.__wbg_inst !== void 0 && this.__wbg_inst !== o) throw new Error("Invalid stale object from previous Wasm instance");
    let n;
    c();
    try {
      n = i.waitingroom_webSocketMessage(this.__wbg_ptr, t, e);
    } catch (_) {
      s(_);
    }
    return n;
  }
};
Symbol.dispose && (R.prototype[Symbol.dispose] = R.prototype.free);
function C() {
  o++, m = null, F = null, k = null, typeof numBytesDecoded < "u" && (numBytesDecoded = 0), typeof l < "u" && (l = 0), G = false, L = false, $ = new WebAssembly.Instance(rt, ot()), i = $.exports, i.__wbindgen_start();
}
__name(C, "C");
function _t() {
  let r2;
  c();
  try {
    r2 = i.__worker_init_state();
  } catch (t) {
    s(t);
  }
  return r2;
}
__name(_t, "_t");
function it(r2, t, e) {
  let n;
  c();
  try {
    n = i.fetch(r2, t, e);
  } catch (_) {
    s(_);
  }
  return n;
}
__name(it, "it");
function ot() {
  return { __proto__: null, "./index_bg.js": { __proto__: null, __wbg_Error_30c8987f7c2ed4e2: /* @__PURE__ */ __name(function(t, e) {
    return Error(d(t, e));
  }, "__wbg_Error_30c8987f7c2ed4e2"), __wbg_Number_14af1003b8dd5ead: /* @__PURE__ */ __name(function(t) {
    return Number(t);
  }, "__wbg_Number_14af1003b8dd5ead"), __wbg_String_8564e559799eccda: /* @__PURE__ */ __name(function(t, e) {
    let n = String(e), _ = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), a = l;
    g().setInt32(t + 4, a, true), g().setInt32(t + 0, _, true);
  }, "__wbg_String_8564e559799eccda"), __wbg___wbindgen_bigint_get_as_i64_a2383202b9353e4c: /* @__PURE__ */ __name(function(t, e) {
    let n = e, _ = typeof n == "bigint" ? n : void 0;
    g().setBigInt64(t + 8, u(_) ? BigInt(0) : _, true), g().setInt32(t + 0, !u(_), true);
  }, "__wbg___wbindgen_bigint_get_as_i64_a2383202b9353e4c"), __wbg___wbindgen_boolean_get_5b446f51afd21013: /* @__PURE__ */ __name(function(t) {
    let e = t, n = typeof e == "boolean" ? e : void 0;
    return u(n) ? 16777215 : n ? 1 : 0;
  }, "__wbg___wbindgen_boolean_get_5b446f51afd21013"), __wbg___wbindgen_debug_string_4687d8d8c2017d52: /* @__PURE__ */ __name(function(t, e) {
    let n = V(e), _ = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), a = l;
    g().setInt32(t + 4, a, true), g().setInt32(t + 0, _, true);
  }, "__wbg___wbindgen_debug_string_4687d8d8c2017d52"), __wbg___wbindgen_in_92f62ee1427d9e49: /* @__PURE__ */ __name(function(t, e) {
    return t in e;
  }, "__wbg___wbindgen_in_92f62ee1427d9e49"), __wbg___wbindgen_is_bigint_b123553bed3bb382: /* @__PURE__ */ __name(function(t) {
    return typeof t == "bigint";
  }, "__wbg___wbindgen_is_bigint_b123553bed3bb382"), __wbg___wbindgen_is_function_1f9d30630b8b1d3d: /* @__PURE__ */ __name(function(t) {
    return typeof t == "function";
  }, "__wbg___wbindgen_is_function_1f9d30630b8b1d3d"), __wbg___wbindgen_is_null_or_undefined_f9435d56bdcc06df: /* @__PURE__ */ __name(function(t) {
    return t == null;
  }, "__wbg___wbindgen_is_null_or_undefined_f9435d56bdcc06df"), __wbg___wbindgen_is_object_3c45d4f2dde4e749: /* @__PURE__ */ __name(function(t) {
    let e = t;
    return typeof e == "object" && e !== null;
  }, "__wbg___wbindgen_is_object_3c45d4f2dde4e749"), __wbg___wbindgen_is_string_90b56bc79aad6f6c: /* @__PURE__ */ __name(function(t) {
    return typeof t == "string";
  }, "__wbg___wbindgen_is_string_90b56bc79aad6f6c"), __wbg___wbindgen_is_undefined_8865fb403f8fe9d8: /* @__PURE__ */ __name(function(t) {
    return t === void 0;
  }, "__wbg___wbindgen_is_undefined_8865fb403f8fe9d8"), __wbg___wbindgen_jsval_eq_02babf21faa37971: /* @__PURE__ */ __name(function(t, e) {
    return t === e;
  }, "__wbg___wbindgen_jsval_eq_02babf21faa37971"), __wbg___wbindgen_jsval_loose_eq_677f21e468d6b461: /* @__PURE__ */ __name(function(t, e) {
    return t == e;
  }, "__wbg___wbindgen_jsval_loose_eq_677f21e468d6b461"), __wbg___wbindgen_number_get_2e0e7dee9f701a71: /* @__PURE__ */ __name(function(t, e) {
    let n = e, _ = typeof n == "number" ? n : void 0;
    g().setFloat64(t + 8, u(_) ? 0 : _, true), g().setInt32(t + 0, !u(_), true);
  }, "__wbg___wbindgen_number_get_2e0e7dee9f701a71"), __wbg___wbindgen_reinit_3f79fdb34dee3ea9: /* @__PURE__ */ __name(function() {
    L = true;
  }, "__wbg___wbindgen_reinit_3f79fdb34dee3ea9"), __wbg___wbindgen_string_get_0380ccaa2f57f0d9: /* @__PURE__ */ __name(function(t, e) {
    let n = e, _ = typeof n == "string" ? n : void 0;
    var a = u(_) ? 0 : p(_, i.__wbindgen_malloc, i.__wbindgen_realloc), f = l;
    g().setInt32(t + 4, f, true), g().setInt32(t + 0, a, true);
  }, "__wbg___wbindgen_string_get_0380ccaa2f57f0d9"), __wbg___wbindgen_throw_41e9ee4f547fc59a: /* @__PURE__ */ __name(function(t, e) {
    throw new WebAssembly.Exception(B, [new Error(d(t, e))]);
  }, "__wbg___wbindgen_throw_41e9ee4f547fc59a"), __wbg__wbg_cb_unref_dcc1a90847f04c41: /* @__PURE__ */ __name(function(t) {
    t._wbg_cb_unref();
  }, "__wbg__wbg_cb_unref_dcc1a90847f04c41"), __wbg_aborted_5b2b5f06b5e59fde: /* @__PURE__ */ __name(function(t) {
    return t.aborted;
  }, "__wbg_aborted_5b2b5f06b5e59fde"), __wbg_arrayBuffer_aa7cad37be6e6b29: /* @__PURE__ */ __name(function(t) {
    return t.arrayBuffer();
  }, "__wbg_arrayBuffer_aa7cad37be6e6b29"), __wbg_body_4e088733babc630d: /* @__PURE__ */ __name(function(t) {
    let e = t.body;
    return u(e) ? 0 : h(e);
  }, "__wbg_body_4e088733babc630d"), __wbg_buffer_56ec2905a66f58b9: /* @__PURE__ */ __name(function(t) {
    return t.buffer;
  }, "__wbg_buffer_56ec2905a66f58b9"), __wbg_byobRequest_54f7ce41d584549a: /* @__PURE__ */ __name(function(t) {
    let e = t.byobRequest;
    return u(e) ? 0 : h(e);
  }, "__wbg_byobRequest_54f7ce41d584549a"), __wbg_byteLength_9f985b8373f1f3fe: /* @__PURE__ */ __name(function(t) {
    return t.byteLength;
  }, "__wbg_byteLength_9f985b8373f1f3fe"), __wbg_byteOffset_0bd5a6a03553639c: /* @__PURE__ */ __name(function(t) {
    return t.byteOffset;
  }, "__wbg_byteOffset_0bd5a6a03553639c"), __wbg_call_187d372bd5fdd4aa: /* @__PURE__ */ __name(function(t, e, n) {
    return t.call(e, n);
  }, "__wbg_call_187d372bd5fdd4aa"), __wbg_call_6137034ef55c9d0f: /* @__PURE__ */ __name(function(t, e) {
    return t.call(e);
  }, "__wbg_call_6137034ef55c9d0f"), __wbg_cancel_7c2a08c8db4c73f3: /* @__PURE__ */ __name(function(t) {
    return t.cancel();
  }, "__wbg_cancel_7c2a08c8db4c73f3"), __wbg_catch_92594c2d17f55f12: /* @__PURE__ */ __name(function(t, e) {
    return t.catch(e);
  }, "__wbg_catch_92594c2d17f55f12"), __wbg_cause_19276d032a32d4bd: /* @__PURE__ */ __name(function(t) {
    return t.cause;
  }, "__wbg_cause_19276d032a32d4bd"), __wbg_cf_909bcfb212a8822c: /* @__PURE__ */ __name(function(t) {
    let e = t.cf;
    return u(e) ? 0 : h(e);
  }, "__wbg_cf_909bcfb212a8822c"), __wbg_cf_b47fe5ff6d015a0d: /* @__PURE__ */ __name(function(t) {
    let e = t.cf;
    return u(e) ? 0 : h(e);
  }, "__wbg_cf_b47fe5ff6d015a0d"), __wbg_close_185286988f30f252: /* @__PURE__ */ __name(function(t) {
    t.close();
  }, "__wbg_close_185286988f30f252"), __wbg_close_748f26698dabe269: /* @__PURE__ */ __name(function(t) {
    t.close();
  }, "__wbg_close_748f26698dabe269"), __wbg_constructor_076176ce0f386e16: /* @__PURE__ */ __name(function(t) {
    return t.constructor;
  }, "__wbg_constructor_076176ce0f386e16"), __wbg_debug_52bda05ddf50b736: /* @__PURE__ */ __name(function(t) {
    console.debug(t);
  }, "__wbg_debug_52bda05ddf50b736"), __wbg_done_b41a1d26cdb37fb6: /* @__PURE__ */ __name(function(t) {
    return t.done;
  }, "__wbg_done_b41a1d26cdb37fb6"), __wbg_enqueue_4a01c128f9a0de16: /* @__PURE__ */ __name(function(t, e) {
    t.enqueue(e);
  }, "__wbg_enqueue_4a01c128f9a0de16"), __wbg_entries_fb6397112b1de25f: /* @__PURE__ */ __name(function(t) {
    return Object.entries(t);
  }, "__wbg_entries_fb6397112b1de25f"), __wbg_error_a30e98d44009f1bb: /* @__PURE__ */ __name(function(t, e) {
    console.error(t, e);
  }, "__wbg_error_a30e98d44009f1bb"), __wbg_error_c9cf3fc2064683a9: /* @__PURE__ */ __name(function(t) {
    console.error(t);
  }, "__wbg_error_c9cf3fc2064683a9"), __wbg_exec_c1b04bcd4d563e9f: /* @__PURE__ */ __name(function(t, e, n, _) {
    return t.exec(d(e, n), ..._);
  }, "__wbg_exec_c1b04bcd4d563e9f"), __wbg_fetch_0e46da8cf7c730e4: /* @__PURE__ */ __name(function(t, e, n, _) {
    return t.fetch(d(e, n), _);
  }, "__wbg_fetch_0e46da8cf7c730e4"), __wbg_fetch_7b5de4f88137a4dc: /* @__PURE__ */ __name(function(t, e, n) {
    return t.fetch(e, n);
  }, "__wbg_fetch_7b5de4f88137a4dc"), __wbg_fetch_ae9b55b3c1c0b596: /* @__PURE__ */ __name(function(t, e) {
    return t.fetch(e);
  }, "__wbg_fetch_ae9b55b3c1c0b596"), __wbg_getAlarm_732a3fe0b33fc4b1: /* @__PURE__ */ __name(function(t, e) {
    return t.getAlarm(e);
  }, "__wbg_getAlarm_732a3fe0b33fc4b1"), __wbg_getRandomValues_a608c4436c19407a: /* @__PURE__ */ __name(function(t, e) {
    globalThis.crypto.getRandomValues(M(t, e));
  }, "__wbg_getRandomValues_a608c4436c19407a"), __wbg_getReader_bf34f92ee19c42b4: /* @__PURE__ */ __name(function(t) {
    return t.getReader();
  }, "__wbg_getReader_bf34f92ee19c42b4"), __wbg_getTime_f5a55efff2585d5d: /* @__PURE__ */ __name(function(t) {
    return t.getTime();
  }, "__wbg_getTime_f5a55efff2585d5d"), __wbg_get_31af05bd4842a84f: /* @__PURE__ */ __name(function(t, e) {
    return Reflect.get(t, e);
  }, "__wbg_get_31af05bd4842a84f"), __wbg_get_658f6698067d9515: /* @__PURE__ */ __name(function(t, e) {
    return Reflect.get(t, e);
  }, "__wbg_get_658f6698067d9515"), __wbg_get_6c896e0571ddae51: /* @__PURE__ */ __name(function(t, e) {
    return t[e >>> 0];
  }, "__wbg_get_6c896e0571ddae51"), __wbg_get_88983e33467eae60: /* @__PURE__ */ __name(function(t, e) {
    let n = Reflect.get(t, e);
    return u(n) ? 0 : h(n);
  }, "__wbg_get_88983e33467eae60"), __wbg_get_done_7020b91c987365c7: /* @__PURE__ */ __name(function(t) {
    let e = t.done;
    return u(e) ? 16777215 : e ? 1 : 0;
  }, "__wbg_get_done_7020b91c987365c7"), __wbg_get_f75619e20cb68514: /* @__PURE__ */ __name(function(t, e, n, _) {
    let a = e.get(d(n, _));
    var f = u(a) ? 0 : p(a, i.__wbindgen_malloc, i.__wbindgen_realloc), b = l;
    g().setInt32(t + 4, b, true), g().setInt32(t + 0, f, true);
  }, "__wbg_get_f75619e20cb68514"), __wbg_get_fc33ed5f5416f95a: /* @__PURE__ */ __name(function(t, e) {
    return t.get(e);
  }, "__wbg_get_fc33ed5f5416f95a"), __wbg_get_unchecked_288889d017702237: /* @__PURE__ */ __name(function(t, e) {
    return t[e >>> 0];
  }, "__wbg_get_unchecked_288889d017702237"), __wbg_get_value_87fbd6ad1283f2e7: /* @__PURE__ */ __name(function(t) {
    return t.value;
  }, "__wbg_get_value_87fbd6ad1283f2e7"), __wbg_get_with_ref_key_6412cf3094599694: /* @__PURE__ */ __name(function(t, e) {
    return t[e];
  }, "__wbg_get_with_ref_key_6412cf3094599694"), __wbg_headers_6930a8bd09b630de: /* @__PURE__ */ __name(function(t) {
    return t.headers;
  }, "__wbg_headers_6930a8bd09b630de"), __wbg_headers_eba93595f8944c2f: /* @__PURE__ */ __name(function(t) {
    return t.headers;
  }, "__wbg_headers_eba93595f8944c2f"), __wbg_idFromName_de3147ec40aecd0e: /* @__PURE__ */ __name(function(t, e, n) {
    return t.idFromName(d(e, n));
  }, "__wbg_idFromName_de3147ec40aecd0e"), __wbg_instanceId_9b67ff33ae8bef8a: /* @__PURE__ */ __name(function(t) {
    return t.instanceId;
  }, "__wbg_instanceId_9b67ff33ae8bef8a"), __wbg_instanceof_ArrayBuffer_a99f175873e5d9b8: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof ArrayBuffer;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_ArrayBuffer_a99f175873e5d9b8"), __wbg_instanceof_Error_80a725f81f2e102d: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof Error;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_Error_80a725f81f2e102d"), __wbg_instanceof_Map_b2611749102d7ba3: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof Map;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_Map_b2611749102d7ba3"), __wbg_instanceof_ReadableStream_e2d77912575119ab: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof ReadableStream;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_ReadableStream_e2d77912575119ab"), __wbg_instanceof_Response_b8758567269c30b2: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof Response;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_Response_b8758567269c30b2"), __wbg_instanceof_Uint8Array_828cef2aaacafc31: /* @__PURE__ */ __name(function(t) {
    let e;
    try {
      e = t instanceof Uint8Array;
    } catch {
      e = false;
    }
    return e;
  }, "__wbg_instanceof_Uint8Array_828cef2aaacafc31"), __wbg_isArray_e15a2ff68ffdbef2: /* @__PURE__ */ __name(function(t) {
    return Array.isArray(t);
  }, "__wbg_isArray_e15a2ff68ffdbef2"), __wbg_isSafeInteger_717808ad6a54bd9e: /* @__PURE__ */ __name(function(t) {
    return Number.isSafeInteger(t);
  }, "__wbg_isSafeInteger_717808ad6a54bd9e"), __wbg_iterator_e3c31c892080e444: /* @__PURE__ */ __name(function() {
    return Symbol.iterator;
  }, "__wbg_iterator_e3c31c892080e444"), __wbg_json_62c1da850fdfa792: /* @__PURE__ */ __name(function(t) {
    return t.json();
  }, "__wbg_json_62c1da850fdfa792"), __wbg_keys_bac434c8972731d5: /* @__PURE__ */ __name(function(t) {
    return t.keys();
  }, "__wbg_keys_bac434c8972731d5"), __wbg_length_7f3c00c40364105e: /* @__PURE__ */ __name(function(t) {
    return t.length;
  }, "__wbg_length_7f3c00c40364105e"), __wbg_length_d4bdea10311bd9cf: /* @__PURE__ */ __name(function(t) {
    return t.length;
  }, "__wbg_length_d4bdea10311bd9cf"), __wbg_log_17c30ef363c61cf4: /* @__PURE__ */ __name(function(t) {
    console.log(t);
  }, "__wbg_log_17c30ef363c61cf4"), __wbg_message_5f8387f0c32b90a7: /* @__PURE__ */ __name(function(t) {
    return t.message;
  }, "__wbg_message_5f8387f0c32b90a7"), __wbg_method_6d02ee0808a7de31: /* @__PURE__ */ __name(function(t, e) {
    let n = e.method, _ = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), a = l;
    g().setInt32(t + 4, a, true), g().setInt32(t + 0, _, true);
  }, "__wbg_method_6d02ee0808a7de31"), __wbg_minifyconfig_new: /* @__PURE__ */ __name(function(t) {
    return v.__wrap(t);
  }, "__wbg_minifyconfig_new"), __wbg_name_e2eac7cdfa054f65: /* @__PURE__ */ __name(function(t) {
    return t.name;
  }, "__wbg_name_e2eac7cdfa054f65"), __wbg_name_f9b814d78e8e299f: /* @__PURE__ */ __name(function(t) {
    return t.name;
  }, "__wbg_name_f9b814d78e8e299f"), __wbg_new_0_72d020f0c63443d4: /* @__PURE__ */ __name(function() {
    return /* @__PURE__ */ new Date();
  }, "__wbg_new_0_72d020f0c63443d4"), __wbg_new_1dbf7428bba60a42: /* @__PURE__ */ __name(function(t) {
    return new Uint8Array(t);
  }, "__wbg_new_1dbf7428bba60a42"), __wbg_new_28744009d011f847: /* @__PURE__ */ __name(function() {
    return /* @__PURE__ */ new Map();
  }, "__wbg_new_28744009d011f847"), __wbg_new_343a093a3c2ffb4e: /* @__PURE__ */ __name(function(t, e) {
    return new Error(d(t, e));
  }, "__wbg_new_343a093a3c2ffb4e"), __wbg_new_34e56228080aa9f8: /* @__PURE__ */ __name(function(t) {
    return new Date(t);
  }, "__wbg_new_34e56228080aa9f8"), __wbg_new_617a8cdb8bb1130e: /* @__PURE__ */ __name(function() {
    return new Object();
  }, "__wbg_new_617a8cdb8bb1130e"), __wbg_new_83ca405eae412a62: /* @__PURE__ */ __name(function() {
    return new Headers();
  }, "__wbg_new_83ca405eae412a62"), __wbg_new_ee2291f50781bf1d: /* @__PURE__ */ __name(function() {
    return new Array();
  }, "__wbg_new_ee2291f50781bf1d"), __wbg_new_from_slice_9a868026ffa4208a: /* @__PURE__ */ __name(function(t, e) {
    return new Uint8Array(M(t, e));
  }, "__wbg_new_from_slice_9a868026ffa4208a"), __wbg_new_typed_b01cb72a8af741a3: /* @__PURE__ */ __name(function(t, e) {
    try {
      var n = { a: t, b: e }, _ = /* @__PURE__ */ __name((f, b) => {
        let w = n.a;
        n.a = 0;
        try {
          return bt(w, n.b, f, b);
        } finally {
          n.a = w;
        }
      }, "_");
      return new Promise(_);
    } finally {
      n.a = 0;
    }
  }, "__wbg_new_typed_b01cb72a8af741a3"), __wbg_new_with_byte_offset_and_length_2f5d7fc2a828b74d: /* @__PURE__ */ __name(function(t, e, n) {
    return new Uint8Array(t, e >>> 0, n >>> 0);
  }, "__wbg_new_with_byte_offset_and_length_2f5d7fc2a828b74d"), __wbg_new_with_length_3da0ad195f6f63ba: /* @__PURE__ */ __name(function(t) {
    return new Uint8Array(t >>> 0);
  }, "__wbg_new_with_length_3da0ad195f6f63ba"), __wbg_new_with_opt_buffer_source_and_init_c1b859a23c80afca: /* @__PURE__ */ __name(function(t, e) {
    return new Response(t, e);
  }, "__wbg_new_with_opt_buffer_source_and_init_c1b859a23c80afca"), __wbg_new_with_opt_readable_stream_and_init_df114f2d364f216d: /* @__PURE__ */ __name(function(t, e) {
    return new Response(t, e);
  }, "__wbg_new_with_opt_readable_stream_and_init_df114f2d364f216d"), __wbg_new_with_opt_str_and_init_33bef1b272950372: /* @__PURE__ */ __name(function(t, e, n) {
    return new Response(t === 0 ? void 0 : d(t, e), n);
  }, "__wbg_new_with_opt_str_and_init_33bef1b272950372"), __wbg_new_with_str_and_init_4618dee4e950224f: /* @__PURE__ */ __name(function(t, e, n) {
    return new Request(d(t, e), n);
  }, "__wbg_new_with_str_and_init_4618dee4e950224f"), __wbg_next_33784799010f1bbe: /* @__PURE__ */ __name(function(t) {
    return t.next;
  }, "__wbg_next_33784799010f1bbe"), __wbg_next_f4aac29c42af995c: /* @__PURE__ */ __name(function(t) {
    return t.next();
  }, "__wbg_next_f4aac29c42af995c"), __wbg_one_a7783206353fbf18: /* @__PURE__ */ __name(function(t) {
    return t.one();
  }, "__wbg_one_a7783206353fbf18"), __wbg_prototypesetcall_bc27214492979395: /* @__PURE__ */ __name(function(t, e, n) {
    Uint8Array.prototype.set.call(M(t, e), n);
  }, "__wbg_prototypesetcall_bc27214492979395"), __wbg_push_2baf45db356cf468: /* @__PURE__ */ __name(function(t, e) {
    return t.push(e);
  }, "__wbg_push_2baf45db356cf468"), __wbg_queueMicrotask_9833f9a49df95a49: /* @__PURE__ */ __name(function(t) {
    return t.queueMicrotask;
  }, "__wbg_queueMicrotask_9833f9a49df95a49"), __wbg_queueMicrotask_a72f977e97f23c5f: /* @__PURE__ */ __name(function(t) {
    queueMicrotask(t);
  }, "__wbg_queueMicrotask_a72f977e97f23c5f"), __wbg_read_2a943774344c9728: /* @__PURE__ */ __name(function(t) {
    return t.read();
  }, "__wbg_read_2a943774344c9728"), __wbg_readable_7c6bc793dd899969: /* @__PURE__ */ __name(function(t) {
    return t.readable;
  }, "__wbg_readable_7c6bc793dd899969"), __wbg_releaseLock_eb64cd83aa9fcfe4: /* @__PURE__ */ __name(function(t) {
    t.releaseLock();
  }, "__wbg_releaseLock_eb64cd83aa9fcfe4"), __wbg_resolve_0076e10020304ede: /* @__PURE__ */ __name(function(t) {
    return Promise.resolve(t);
  }, "__wbg_resolve_0076e10020304ede"), __wbg_respond_c102fabcc79e5ef0: /* @__PURE__ */ __name(function(t, e) {
    t.respond(e >>> 0);
  }, "__wbg_respond_c102fabcc79e5ef0"), __wbg_setAlarm_c5fe74baa2cbb03d: /* @__PURE__ */ __name(function(t, e, n) {
    return t.setAlarm(e, n);
  }, "__wbg_setAlarm_c5fe74baa2cbb03d"), __wbg_set_145a351398b48c65: /* @__PURE__ */ __name(function(t, e, n) {
    return Reflect.set(t, e, n);
  }, "__wbg_set_145a351398b48c65"), __wbg_set_575d3ddb70fe831d: /* @__PURE__ */ __name(function(t, e, n) {
    t.set(M(e, n));
  }, "__wbg_set_575d3ddb70fe831d"), __wbg_set_6ae97e73113c4f0b: /* @__PURE__ */ __name(function(t, e, n) {
    return t.set(e, n);
  }, "__wbg_set_6ae97e73113c4f0b"), __wbg_set_6be42768c690e380: /* @__PURE__ */ __name(function(t, e, n) {
    t[e] = n;
  }, "__wbg_set_6be42768c690e380"), __wbg_set_af5932e3f78b5648: /* @__PURE__ */ __name(function(t, e, n, _, a) {
    t.set(d(e, n), d(_, a));
  }, "__wbg_set_af5932e3f78b5648"), __wbg_set_body_1fb0f1008bfc7df6: /* @__PURE__ */ __name(function(t, e) {
    t.body = e;
  }, "__wbg_set_body_1fb0f1008bfc7df6"), __wbg_set_cache_7507c4cc5938ccc7: /* @__PURE__ */ __name(function(t, e) {
    t.cache = wt[e];
  }, "__wbg_set_cache_7507c4cc5938ccc7"), __wbg_set_criticalError_3904d60fe2a0b05b: /* @__PURE__ */ __name(function(t, e) {
    t.criticalError = e !== 0;
  }, "__wbg_set_criticalError_3904d60fe2a0b05b"), __wbg_set_headers_40ad33dcf016613f: /* @__PURE__ */ __name(function(t, e) {
    t.headers = e;
  }, "__wbg_set_headers_40ad33dcf016613f"), __wbg_set_headers_69ef7c46a2e6c742: /* @__PURE__ */ __name(function(t, e) {
    t.headers = e;
  }, "__wbg_set_headers_69ef7c46a2e6c742"), __wbg_set_instanceId_9ad5caac0a4e519c: /* @__PURE__ */ __name(function(t, e) {
    t.instanceId = e >>> 0;
  }, "__wbg_set_instanceId_9ad5caac0a4e519c"), __wbg_set_method_dcb32343247ec427: /* @__PURE__ */ __name(function(t, e, n) {
    t.method = d(e, n);
  }, "__wbg_set_method_dcb32343247ec427"), __wbg_set_redirect_cc128ab2411da334: /* @__PURE__ */ __name(function(t, e) {
    t.redirect = gt[e];
  }, "__wbg_set_redirect_cc128ab2411da334"), __wbg_set_signal_2dbd377604627f26: /* @__PURE__ */ __name(function(t, e) {
    t.signal = e;
  }, "__wbg_set_signal_2dbd377604627f26"), __wbg_set_status_678f122cbe435d95: /* @__PURE__ */ __name(function(t, e) {
    t.status = e;
  }, "__wbg_set_status_678f122cbe435d95"), __wbg_sql_eba8854fa103d621: /* @__PURE__ */ __name(function(t) {
    return t.sql;
  }, "__wbg_sql_eba8854fa103d621"), __wbg_static_accessor_GLOBAL_266715b9d96ba635: /* @__PURE__ */ __name(function() {
    let t = typeof global > "u" ? null : global;
    return u(t) ? 0 : h(t);
  }, "__wbg_static_accessor_GLOBAL_266715b9d96ba635"), __wbg_static_accessor_GLOBAL_THIS_10fb7dc1ae063179: /* @__PURE__ */ __name(function() {
    let t = typeof globalThis > "u" ? null : globalThis;
    return u(t) ? 0 : h(t);
  }, "__wbg_static_accessor_GLOBAL_THIS_10fb7dc1ae063179"), __wbg_static_accessor_INIT_STATE_e3fce2ad8a08e94e: /* @__PURE__ */ __name(function() {
    return Q;
  }, "__wbg_static_accessor_INIT_STATE_e3fce2ad8a08e94e"), __wbg_static_accessor_SELF_0b583911f537483a: /* @__PURE__ */ __name(function() {
    let t = typeof self > "u" ? null : self;
    return u(t) ? 0 : h(t);
  }, "__wbg_static_accessor_SELF_0b583911f537483a"), __wbg_static_accessor_WINDOW_d7f903d1508cbdc4: /* @__PURE__ */ __name(function() {
    let t = typeof window > "u" ? null : window;
    return u(t) ? 0 : h(t);
  }, "__wbg_static_accessor_WINDOW_d7f903d1508cbdc4"), __wbg_status_ce0a98d3c57125f3: /* @__PURE__ */ __name(function(t) {
    return t.status;
  }, "__wbg_status_ce0a98d3c57125f3"), __wbg_storage_dbf440e5000527fe: /* @__PURE__ */ __name(function(t) {
    return t.storage;
  }, "__wbg_storage_dbf440e5000527fe"), __wbg_then_c949d5a25a4e78f8: /* @__PURE__ */ __name(function(t, e, n) {
    return t.then(e, n);
  }, "__wbg_then_c949d5a25a4e78f8"), __wbg_then_e71170d78fcf8954: /* @__PURE__ */ __name(function(t, e) {
    return t.then(e);
  }, "__wbg_then_e71170d78fcf8954"), __wbg_timeout_25d20c380ad63001: /* @__PURE__ */ __name(function(t) {
    return AbortSignal.timeout(t >>> 0);
  }, "__wbg_timeout_25d20c380ad63001"), __wbg_toArray_2757e80d5ccf01a6: /* @__PURE__ */ __name(function(t) {
    return t.toArray();
  }, "__wbg_toArray_2757e80d5ccf01a6"), __wbg_url_7bfada5c2297bc70: /* @__PURE__ */ __name(function(t, e) {
    let n = e.url, _ = p(n, i.__wbindgen_malloc, i.__wbindgen_realloc), a = l;
    g().setInt32(t + 4, a, true), g().setInt32(t + 0, _, true);
  }, "__wbg_url_7bfada5c2297bc70"), __wbg_value_f3c585ee8f5ba40c: /* @__PURE__ */ __name(function(t) {
    return t.value;
  }, "__wbg_value_f3c585ee8f5ba40c"), __wbg_view_9c570f33e8d6ab96: /* @__PURE__ */ __name(function(t) {
    let e = t.view;
    return u(e) ? 0 : h(e);
  }, "__wbg_view_9c570f33e8d6ab96"), __wbg_warn_13abc63e0d4b3527: /* @__PURE__ */ __name(function(t) {
    console.warn(t);
  }, "__wbg_warn_13abc63e0d4b3527"), __wbg_webSocket_2b7e8e9549bed673: /* @__PURE__ */ __name(function(t) {
    let e = t.webSocket;
    return u(e) ? 0 : h(e);
  }, "__wbg_webSocket_2b7e8e9549bed673"), __wbg_writable_a897472079c09078: /* @__PURE__ */ __name(function(t) {
    return t.writable;
  }, "__wbg_writable_a897472079c09078"), __wbindgen_generic_0000000000000001: /* @__PURE__ */ __name(function(t, e) {
    return nt(t, e, at);
  }, "__wbindgen_generic_0000000000000001"), __wbindgen_generic_0000000000000002: /* @__PURE__ */ __name(function(t, e) {
    return nt(t, e, ft);
  }, "__wbindgen_generic_0000000000000002"), __wbindgen_generic_0000000000000003: /* @__PURE__ */ __name(function(t) {
    return t;
  }, "__wbindgen_generic_0000000000000003"), __wbindgen_generic_0000000000000004: /* @__PURE__ */ __name(function(t) {
    return t;
  }, "__wbindgen_generic_0000000000000004"), __wbindgen_generic_0000000000000005: /* @__PURE__ */ __name(function(t, e) {
    return d(t, e);
  }, "__wbindgen_generic_0000000000000005"), __wbindgen_generic_0000000000000006: /* @__PURE__ */ __name(function(t) {
    return BigInt.asUintN(64, t);
  }, "__wbindgen_generic_0000000000000006"), __wbindgen_init_externref_table: /* @__PURE__ */ __name(function() {
    let t = i.__wbindgen_externrefs, e = t.grow(4);
    t.set(0, void 0), t.set(e + 0, void 0), t.set(e + 1, null), t.set(e + 2, true), t.set(e + 3, false);
  }, "__wbindgen_init_externref_table"), __wbindgen_jstag: WebAssembly.JSTag, __wbindgen_rethrow_critical: /* @__PURE__ */ __name(function(t) {
    throw new Error("Critical error", { cause: t });
  }, "__wbindgen_rethrow_critical") } };
}
__name(ot, "ot");
var B = new WebAssembly.Tag({ parameters: ["externref"] });
var N;
var G = false;
function st() {
  G = true;
  try {
    let r2 = H()[i.__abort_handler.value / 4];
    r2 && i.__wbindgen_export.get(r2)();
  } catch {
  }
}
__name(st, "st");
function s(r2) {
  throw r2 instanceof WebAssembly.Exception && r2.is(B) ? r2.getArg(B, 0) : (H()[N] = 1, st(), r2);
}
__name(s, "s");
function c() {
  if (N ??= i.__instance_terminated.value / 4, H()[N]) {
    if (G || st(), L) {
      C();
      return;
    }
    throw new Error("Module terminated");
  } else L && C();
}
__name(c, "c");
function at(r2, t, e) {
  c();
  try {
    i.wasm_bindgen__convert__closures_____invoke__h905ce359f7b8321c(r2, t, e);
  } catch (n) {
    s(n);
  }
}
__name(at, "at");
function ft(r2, t, e) {
  let n;
  c();
  try {
    n = i.wasm_bindgen__convert__closures_____invoke__haf6ef2cd8c33ac3c(r2, t, e);
  } catch (_) {
    s(_);
  }
  if (n[1]) throw It(n[0]);
}
__name(ft, "ft");
function bt(r2, t, e, n) {
  c();
  try {
    i.wasm_bindgen__convert__closures_____invoke__h02e648c5f8bd1f0c(r2, t, e, n);
  } catch (_) {
    s(_);
  }
}
__name(bt, "bt");
var ut = ["bytes"];
var wt = ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"];
var gt = ["follow", "error", "manual"];
var o = 0;
var lt = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_containerstartupoptions_free(r2, 1);
});
var X = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_globallimiter_free(r2, 1);
});
var dt = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_intounderlyingbytesource_free(r2, 1);
});
var ht = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_intounderlyingsink_free(r2, 1);
});
var pt = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_intounderlyingsource_free(r2, 1);
});
var Y = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_minifyconfig_free(r2, 1);
});
var yt = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_r2range_free(r2, 1);
});
var Z = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_usersession_free(r2, 1);
});
var tt = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry(({ ptr: r2, instance: t }) => {
  t === o && i.__wbg_waitingroom_free(r2, 1);
});
function h(r2) {
  let t = i.__externref_table_alloc();
  return i.__wbindgen_externrefs.set(t, r2), t;
}
__name(h, "h");
var et = typeof FinalizationRegistry > "u" ? { register: /* @__PURE__ */ __name(() => {
}, "register"), unregister: /* @__PURE__ */ __name(() => {
}, "unregister") } : new FinalizationRegistry((r2) => {
  r2.instance === o && i.__wbindgen_destroy_closure(r2.a, r2.b);
});
function V(r2) {
  let t = typeof r2;
  if (t == "number" || t == "boolean" || r2 == null) return `${r2}`;
  if (t == "string") return `"${r2}"`;
  if (t == "symbol") {
    let _ = r2.description;
    return _ == null ? "Symbol" : `Symbol(${_})`;
  }
  if (t == "function") {
    let _ = r2.name;
    return typeof _ == "string" && _.length > 0 ? `Function(${_})` : "Function";
  }
  if (Array.isArray(r2)) {
    let _ = r2.length, a = "[";
    _ > 0 && (a += V(r2[0]));
    for (let f = 1; f < _; f++) a += ", " + V(r2[f]);
    return a += "]", a;
  }
  let e = /\[object ([^\]]+)\]/.exec(toString.call(r2)), n;
  if (e && e.length > 1) n = e[1];
  else return toString.call(r2);
  if (n == "Object") try {
    return "Object(" + JSON.stringify(r2) + ")";
  } catch {
    return "Object";
  }
  return r2 instanceof Error ? `${r2.name}: ${r2.message}
${r2.stack}` : n;
}
__name(V, "V");
function mt(r2, t) {
  r2 = r2 >>> 0;
  let e = g(), n = [];
  for (let _ = r2; _ < r2 + 4 * t; _ += 4) n.push(i.__wbindgen_externrefs.get(e.getUint32(_, true)));
  return i.__externref_drop_slice(r2, t), n;
}
__name(mt, "mt");
function M(r2, t) {
  return r2 = r2 >>> 0, A().subarray(r2 / 1, r2 / 1 + t);
}
__name(M, "M");
var m = null;
function g() {
  return (m === null || m.buffer.detached === true || m.buffer.detached === void 0 && m.buffer !== i.memory.buffer) && (m = new DataView(i.memory.buffer)), m;
}
__name(g, "g");
var F = null;
function H() {
  return (F === null || F.byteLength === 0) && (F = new Int32Array(i.memory.buffer)), F;
}
__name(H, "H");
function d(r2, t) {
  return Et(r2 >>> 0, t);
}
__name(d, "d");
var k = null;
function A() {
  return (k === null || k.byteLength === 0) && (k = new Uint8Array(i.memory.buffer)), k;
}
__name(A, "A");
function u(r2) {
  return r2 == null;
}
__name(u, "u");
function nt(r2, t, e) {
  let n = { a: r2, b: t, cnt: 1, instance: o }, _ = /* @__PURE__ */ __name((...a) => {
    if (n.instance !== o) throw new Error("Cannot invoke closure from previous WASM instance");
    n.cnt++;
    let f = n.a;
    n.a = 0;
    try {
      return e(f, n.b, ...a);
    } finally {
      n.a = f, _._wbg_cb_unref();
    }
  }, "_");
  return _._wbg_cb_unref = () => {
    --n.cnt === 0 && (i.__wbindgen_destroy_closure(n.a, n.b), n.a = 0, et.unregister(n));
  }, et.register(_, n, n), _;
}
__name(nt, "nt");
function vt(r2, t) {
  let e = t(r2.length * 4, 4) >>> 0;
  for (let n = 0; n < r2.length; n++) {
    let _ = h(r2[n]);
    g().setUint32(e + 4 * n, _, true);
  }
  return l = r2.length, e;
}
__name(vt, "vt");
function p(r2, t, e) {
  if (e === void 0) {
    let b = z.encode(r2), w = t(b.length, 1) >>> 0;
    return A().subarray(w, w + b.length).set(b), l = b.length, w;
  }
  let n = r2.length, _ = t(n, 1) >>> 0, a = A(), f = 0;
  for (; f < n; f++) {
    let b = r2.charCodeAt(f);
    if (b > 127) break;
    a[_ + f] = b;
  }
  if (f !== n) {
    f !== 0 && (r2 = r2.slice(f)), _ = e(_, n, n = f + r2.length * 3, 1) >>> 0;
    let b = A().subarray(_ + f, _ + n), w = z.encodeInto(r2, b);
    f += w.written, _ = e(_, n, f, 1) >>> 0;
  }
  return l = f, _;
}
__name(p, "p");
var L = false;
function It(r2) {
  let t = i.__wbindgen_externrefs.get(r2);
  return i.__externref_table_dealloc(r2), t;
}
__name(It, "It");
var ct = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });
ct.decode();
function Et(r2, t) {
  return ct.decode(A().subarray(r2, r2 + t));
}
__name(Et, "Et");
var z = new TextEncoder();
"encodeInto" in z || (z.encodeInto = function(r2, t) {
  let e = z.encode(r2);
  return t.set(e), { read: r2.length, written: e.length };
});
var l = 0;
var $ = new WebAssembly.Instance(rt, ot());
var i = $.exports;
i.__wbindgen_start();
Error.stackTraceLimit = 100;
var y = _t();
function J() {
  y.criticalError && (console.log("Reinitializing Wasm application"), C(), y.criticalError = false, y.instanceId++);
}
__name(J, "J");
addEventListener("error", (r2) => {
  K(r2.error);
});
function K(r2) {
  r2 instanceof WebAssembly.RuntimeError && (console.error("Critical", r2), y.criticalError = true);
}
__name(K, "K");
var U = class extends jt {
  static {
    __name(this, "U");
  }
};
U.prototype.fetch = function(t) {
  return it.call(this, t, this.env, this.ctx);
};
var St = { set: /* @__PURE__ */ __name((r2, t, e, n) => Reflect.set(r2.instance, t, e, n), "set"), has: /* @__PURE__ */ __name((r2, t) => Reflect.has(r2.instance, t), "has"), deleteProperty: /* @__PURE__ */ __name((r2, t) => Reflect.deleteProperty(r2.instance, t), "deleteProperty"), apply: /* @__PURE__ */ __name((r2, t, e) => Reflect.apply(r2.instance, t, e), "apply"), construct: /* @__PURE__ */ __name((r2, t, e) => Reflect.construct(r2.instance, t, e), "construct"), getPrototypeOf: /* @__PURE__ */ __name((r2) => Reflect.getPrototypeOf(r2.instance), "getPrototypeOf"), setPrototypeOf: /* @__PURE__ */ __name((r2, t) => Reflect.setPrototypeOf(r2.instance, t), "setPrototypeOf"), isExtensible: /* @__PURE__ */ __name((r2) => Reflect.isExtensible(r2.instance), "isExtensible"), preventExtensions: /* @__PURE__ */ __name((r2) => Reflect.preventExtensions(r2.instance), "preventExtensions"), getOwnPropertyDescriptor: /* @__PURE__ */ __name((r2, t) => Reflect.getOwnPropertyDescriptor(r2.instance, t), "getOwnPropertyDescriptor"), defineProperty: /* @__PURE__ */ __name((r2, t, e) => Reflect.defineProperty(r2.instance, t, e), "defineProperty"), ownKeys: /* @__PURE__ */ __name((r2) => Reflect.ownKeys(r2.instance), "ownKeys") };
var I = { construct(r2, t, e) {
  try {
    J();
    let n = { instance: Reflect.construct(r2, t, e), instanceId: y.instanceId, ctor: r2, args: t, newTarget: e };
    return new Proxy(n, { ...St, get(_, a, f) {
      _.instanceId !== y.instanceId && (_.instance = Reflect.construct(_.ctor, _.args, _.newTarget), _.instanceId = y.instanceId);
      let b = Reflect.get(_.instance, a, f);
      return typeof b != "function" ? b : b.constructor === Function ? new Proxy(b, { apply(w, q, D) {
        J();
        try {
          return w.apply(q, D);
        } catch (W) {
          throw K(W), W;
        }
      } }) : new Proxy(b, { async apply(w, q, D) {
        J();
        try {
          return await w.apply(q, D);
        } catch (W) {
          throw K(W), W;
        }
      } });
    } });
  } catch (n) {
    throw y.criticalError = true, n;
  }
} };
var At = new Proxy(U, I);
var zt = new Proxy(E, I);
var Mt = new Proxy(x, I);
var Ot = new Proxy(v, I);
var Pt = new Proxy(j, I);
var Tt = new Proxy(S, I);
var Ct = new Proxy(R, I);

// ../node_modules/wrangler/templates/middleware/middleware-ensure-req-body-drained.ts
var drainBody = /* @__PURE__ */ __name(async (request, env, _ctx, middlewareCtx) => {
  try {
    return await middlewareCtx.next(request, env);
  } finally {
    try {
      if (request.body !== null && !request.bodyUsed) {
        const reader = request.body.getReader();
        while (!(await reader.read()).done) {
        }
      }
    } catch (e) {
      console.error("Failed to drain the unused request body.", e);
    }
  }
}, "drainBody");
var middleware_ensure_req_body_drained_default = drainBody;

// ../node_modules/wrangler/templates/middleware/middleware-miniflare3-json-error.ts
function reduceError(e) {
  return {
    name: e?.name,
    message: e?.message ?? String(e),
    stack: e?.stack,
    cause: e?.cause === void 0 ? void 0 : reduceError(e.cause)
  };
}
__name(reduceError, "reduceError");
var jsonError = /* @__PURE__ */ __name(async (request, env, _ctx, middlewareCtx) => {
  try {
    return await middlewareCtx.next(request, env);
  } catch (e) {
    const error = reduceError(e);
    return Response.json(error, {
      status: 500,
      headers: { "MF-Experimental-Error-Stack": "true" }
    });
  }
}, "jsonError");
var middleware_miniflare3_json_error_default = jsonError;

// .wrangler/tmp/bundle-M05Iri/middleware-insertion-facade.js
var __INTERNAL_WRANGLER_MIDDLEWARE__ = [
  middleware_ensure_req_body_drained_default,
  middleware_miniflare3_json_error_default
];
var middleware_insertion_facade_default = At;

// ../node_modules/wrangler/templates/middleware/common.ts
var __facade_middleware__ = [];
function __facade_register__(...args) {
  __facade_middleware__.push(...args.flat());
}
__name(__facade_register__, "__facade_register__");
function __facade_invokeChain__(request, env, ctx, dispatch, middlewareChain) {
  const [head, ...tail] = middlewareChain;
  const middlewareCtx = {
    dispatch,
    next(newRequest, newEnv) {
      return __facade_invokeChain__(newRequest, newEnv, ctx, dispatch, tail);
    }
  };
  return head(request, env, ctx, middlewareCtx);
}
__name(__facade_invokeChain__, "__facade_invokeChain__");
function __facade_invoke__(request, env, ctx, dispatch, finalMiddleware) {
  return __facade_invokeChain__(request, env, ctx, dispatch, [
    ...__facade_middleware__,
    finalMiddleware
  ]);
}
__name(__facade_invoke__, "__facade_invoke__");

// .wrangler/tmp/bundle-M05Iri/middleware-loader.entry.ts
var __Facade_ScheduledController__ = class ___Facade_ScheduledController__ {
  constructor(scheduledTime, cron, noRetry) {
    this.scheduledTime = scheduledTime;
    this.cron = cron;
    this.#noRetry = noRetry;
  }
  static {
    __name(this, "__Facade_ScheduledController__");
  }
  #noRetry;
  noRetry() {
    if (!(this instanceof ___Facade_ScheduledController__)) {
      throw new TypeError("Illegal invocation");
    }
    this.#noRetry();
  }
};
function wrapExportedHandler(worker) {
  if (__INTERNAL_WRANGLER_MIDDLEWARE__ === void 0 || __INTERNAL_WRANGLER_MIDDLEWARE__.length === 0) {
    return worker;
  }
  for (const middleware of __INTERNAL_WRANGLER_MIDDLEWARE__) {
    __facade_register__(middleware);
  }
  const fetchDispatcher = /* @__PURE__ */ __name(function(request, env, ctx) {
    if (worker.fetch === void 0) {
      throw new Error("Handler does not export a fetch() function.");
    }
    return worker.fetch(request, env, ctx);
  }, "fetchDispatcher");
  return {
    ...worker,
    fetch(request, env, ctx) {
      const dispatcher = /* @__PURE__ */ __name(function(type, init) {
        if (type === "scheduled" && worker.scheduled !== void 0) {
          const controller = new __Facade_ScheduledController__(
            Date.now(),
            init.cron ?? "",
            () => {
            }
          );
          return worker.scheduled(controller, env, ctx);
        }
      }, "dispatcher");
      return __facade_invoke__(request, env, ctx, dispatcher, fetchDispatcher);
    }
  };
}
__name(wrapExportedHandler, "wrapExportedHandler");
function wrapWorkerEntrypoint(klass) {
  if (__INTERNAL_WRANGLER_MIDDLEWARE__ === void 0 || __INTERNAL_WRANGLER_MIDDLEWARE__.length === 0) {
    return klass;
  }
  for (const middleware of __INTERNAL_WRANGLER_MIDDLEWARE__) {
    __facade_register__(middleware);
  }
  return class extends klass {
    #fetchDispatcher = /* @__PURE__ */ __name((request, env, ctx) => {
      this.env = env;
      this.ctx = ctx;
      if (super.fetch === void 0) {
        throw new Error("Entrypoint class does not define a fetch() function.");
      }
      return super.fetch(request);
    }, "#fetchDispatcher");
    #dispatcher = /* @__PURE__ */ __name((type, init) => {
      if (type === "scheduled" && super.scheduled !== void 0) {
        const controller = new __Facade_ScheduledController__(
          Date.now(),
          init.cron ?? "",
          () => {
          }
        );
        return super.scheduled(controller);
      }
    }, "#dispatcher");
    fetch(request) {
      return __facade_invoke__(
        request,
        this.env,
        this.ctx,
        this.#dispatcher,
        this.#fetchDispatcher
      );
    }
  };
}
__name(wrapWorkerEntrypoint, "wrapWorkerEntrypoint");
var WRAPPED_ENTRY;
if (typeof middleware_insertion_facade_default === "object") {
  WRAPPED_ENTRY = wrapExportedHandler(middleware_insertion_facade_default);
} else if (typeof middleware_insertion_facade_default === "function") {
  WRAPPED_ENTRY = wrapWorkerEntrypoint(middleware_insertion_facade_default);
}
var middleware_loader_entry_default = WRAPPED_ENTRY;
export {
  zt as ContainerStartupOptions,
  Mt as GlobalLimiter,
  Ot as MinifyConfig,
  Pt as R2Range,
  Tt as UserSession,
  Ct as WaitingRoom,
  __INTERNAL_WRANGLER_MIDDLEWARE__,
  middleware_loader_entry_default as default
};
//# sourceMappingURL=index.js.map
