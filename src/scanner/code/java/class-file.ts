/**
 * A small reader of the class-file format (JVMS chapter 4, Java 1.0 to 25 class files, major 45–69):
 * the constant pool, and per method the members and classes its bytecode refers to, read from the
 * operands of `invoke*`, `get*`/`put*`, `new`, `checkcast`, `instanceof`, `anewarray`,
 * `multianewarray`, `ldc` (classes, method handles, dynamic constants), the method handles of
 * `invokedynamic` bootstrap methods and their arguments (lambdas and method references to library
 * methods), and the caught exception classes. Written here rather than taken from @xmcl/asm: on
 * log4j-core's 1,093 classes it is an order of magnitude faster (see docs/benchmarks.md) and only this
 * subset is needed.
 */

export class ClassFormatError extends Error {
  override name = "ClassFormatError";
}

/** One use, by internal names: `{kind: "method", owner: "org/x/Foo", name: "bar", descriptor: "(I)V"}`. */
export interface MemberUse {
  kind: "method" | "field" | "class";
  owner: string;
  /** "" for a class. */
  name: string;
  /** "" for a class. */
  descriptor: string;
}

export interface MethodUses {
  name: string;
  descriptor: string;
  uses: MemberUse[];
}

export interface ClassUses {
  /** Internal name (`org/x/Foo$Bar`). */
  name: string;
  major: number;
  /** Superclass and interfaces (class references made by the class itself rather than by a method). */
  supertypes: string[];
  methods: MethodUses[];
}

const CONSTANT = {
  Utf8: 1,
  Integer: 3,
  Float: 4,
  Long: 5,
  Double: 6,
  Class: 7,
  String: 8,
  Fieldref: 9,
  Methodref: 10,
  InterfaceMethodref: 11,
  NameAndType: 12,
  MethodHandle: 15,
  MethodType: 16,
  Dynamic: 17,
  InvokeDynamic: 18,
  Module: 19,
  Package: 20,
} as const;

/**
 * Length of each opcode with its operands; 0 for the variable-length ones (tableswitch, lookupswitch,
 * wide) and for undefined opcodes.
 */
const OPCODE_LENGTH = new Uint8Array(256);
(() => {
  const set = (from: number, to: number, length: number) => OPCODE_LENGTH.fill(length, from, to + 1);
  set(0x00, 0x0f, 1);
  set(0x10, 0x10, 2); // bipush
  set(0x11, 0x11, 3); // sipush
  set(0x12, 0x12, 2); // ldc
  set(0x13, 0x14, 3); // ldc_w, ldc2_w
  set(0x15, 0x19, 2); // loads
  set(0x1a, 0x35, 1);
  set(0x36, 0x3a, 2); // stores
  set(0x3b, 0x83, 1);
  set(0x84, 0x84, 3); // iinc
  set(0x85, 0x98, 1);
  set(0x99, 0xa8, 3); // if*, goto, jsr
  set(0xa9, 0xa9, 2); // ret
  set(0xac, 0xb1, 1); // returns
  set(0xb2, 0xb8, 3); // get/put, invokevirtual/special/static
  set(0xb9, 0xba, 5); // invokeinterface, invokedynamic
  set(0xbb, 0xbb, 3); // new
  set(0xbc, 0xbc, 2); // newarray
  set(0xbd, 0xbd, 3); // anewarray
  set(0xbe, 0xbf, 1);
  set(0xc0, 0xc1, 3); // checkcast, instanceof
  set(0xc2, 0xc3, 1);
  set(0xc5, 0xc5, 4); // multianewarray
  set(0xc6, 0xc7, 3); // ifnull, ifnonnull
  set(0xc8, 0xc9, 5); // goto_w, jsr_w
  set(0xca, 0xca, 1); // breakpoint
  set(0xfe, 0xff, 1); // impdep
})();

const latin1 = new TextDecoder("latin1");

/** Reads the uses of one class file; throws ClassFormatError when the bytes are not a class file. */
export function readClassUses(bytes: Uint8Array): ClassUses {
  try {
    return new Reader(bytes).read();
  } catch (error) {
    if (error instanceof ClassFormatError) throw error;
    if (error instanceof RangeError) throw new ClassFormatError("truncated class file");
    throw new ClassFormatError((error as Error).message);
  }
}

class Reader {
  private readonly view: DataView;
  private tags = new Uint8Array(0);
  /** Offset of each constant's body (after its tag). */
  private offsets = new Int32Array(0);
  private strings: (string | undefined)[] = [];
  /** One MemberUse per constant-pool entry (members and classes), built on first use. */
  private uses: (MemberUse | undefined)[] = [];
  /** Offsets of the BootstrapMethods attribute's entries, read before the methods' code is walked. */
  private bootstrapOffsets: number[] = [];
  private readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private u1(at: number): number {
    return this.view.getUint8(at);
  }
  private u2(at: number): number {
    return this.view.getUint16(at);
  }
  private u4(at: number): number {
    return this.view.getUint32(at);
  }

  read(): ClassUses {
    if (this.bytes.length < 10 || this.u4(0) !== 0xcafebabe) throw new ClassFormatError("not a class file");
    const major = this.u2(6);
    if (major < 45) throw new ClassFormatError(`unsupported class-file version ${major}`);
    let at = this.readPool(8);
    at += 2; // access flags
    const name = this.className(this.u2(at));
    const superIndex = this.u2(at + 2);
    const supertypes = superIndex === 0 ? [] : [this.className(superIndex)];
    const interfaces = this.u2(at + 4);
    at += 6;
    for (let i = 0; i < interfaces; i++, at += 2) supertypes.push(this.className(this.u2(at)));
    at = this.skipMembers(at); // fields
    const methodsAt = at;
    at = this.skipMembers(at);
    this.findBootstrapMethods(at);
    return { name, major, supertypes, methods: this.readMethods(methodsAt) };
  }

  private readPool(start: number): number {
    const count = this.u2(start);
    this.tags = new Uint8Array(count);
    this.offsets = new Int32Array(count);
    this.strings = new Array(count);
    this.uses = new Array(count);
    let at = start + 2;
    for (let i = 1; i < count; i++) {
      const tag = this.u1(at);
      this.tags[i] = tag;
      this.offsets[i] = at + 1;
      switch (tag) {
        case CONSTANT.Utf8:
          at += 3 + this.u2(at + 1);
          break;
        case CONSTANT.Integer:
        case CONSTANT.Float:
        case CONSTANT.Fieldref:
        case CONSTANT.Methodref:
        case CONSTANT.InterfaceMethodref:
        case CONSTANT.NameAndType:
        case CONSTANT.Dynamic:
        case CONSTANT.InvokeDynamic:
          at += 5;
          break;
        case CONSTANT.Long:
        case CONSTANT.Double:
          at += 9;
          i++; // takes two entries
          break;
        case CONSTANT.Class:
        case CONSTANT.String:
        case CONSTANT.MethodType:
        case CONSTANT.Module:
        case CONSTANT.Package:
          at += 3;
          break;
        case CONSTANT.MethodHandle:
          at += 4;
          break;
        default:
          throw new ClassFormatError(`unknown constant-pool tag ${tag} at entry ${i}`);
      }
    }
    if (at > this.bytes.length) throw new ClassFormatError("truncated class file");
    return at;
  }

  private expect(index: number, ...tags: number[]): number {
    const tag = index > 0 && index < this.tags.length ? this.tags[index] : 0;
    if (tag === undefined || !tags.includes(tag))
      throw new ClassFormatError(`constant-pool entry ${index} is not of the expected kind`);
    return this.offsets[index] as number;
  }

  /** Modified UTF-8 (JVMS 4.4.7): code units encoded one by one, so decoding each sequence suffices. */
  private utf8(index: number): string {
    const cached = this.strings[index];
    if (cached !== undefined) return cached;
    const at = this.expect(index, CONSTANT.Utf8);
    const length = this.u2(at);
    const start = at + 2;
    const end = start + length;
    if (end > this.bytes.length) throw new ClassFormatError("truncated class file");
    let ascii = true;
    for (let i = start; i < end; i++) {
      if ((this.bytes[i] as number) >= 0x80) {
        ascii = false;
        break;
      }
    }
    let text: string;
    if (ascii) text = latin1.decode(this.bytes.subarray(start, end));
    else {
      const units: number[] = [];
      for (let i = start; i < end; ) {
        const a = this.bytes[i++] as number;
        if (a < 0x80) units.push(a);
        else if ((a & 0xe0) === 0xc0) units.push(((a & 0x1f) << 6) | ((this.bytes[i++] as number) & 0x3f));
        else {
          const b = this.bytes[i++] as number;
          const c = this.bytes[i++] as number;
          units.push(((a & 0x0f) << 12) | ((b & 0x3f) << 6) | (c & 0x3f));
        }
      }
      text = String.fromCharCode(...units);
    }
    this.strings[index] = text;
    return text;
  }

  private className(index: number): string {
    return this.utf8(this.u2(this.expect(index, CONSTANT.Class)));
  }

  private memberRef(index: number): MemberUse {
    const cached = this.uses[index];
    if (cached !== undefined) return cached;
    const use = this.readMemberRef(index);
    this.uses[index] = use;
    return use;
  }

  private classRef(index: number): MemberUse {
    const cached = this.uses[index];
    if (cached !== undefined) return cached;
    const use = classUse(this.className(index));
    this.uses[index] = use;
    return use;
  }

  private readMemberRef(index: number): MemberUse {
    const at = this.expect(index, CONSTANT.Fieldref, CONSTANT.Methodref, CONSTANT.InterfaceMethodref);
    const nat = this.expect(this.u2(at + 2), CONSTANT.NameAndType);
    return {
      kind: this.tags[index] === CONSTANT.Fieldref ? "field" : "method",
      owner: this.className(this.u2(at)),
      name: this.utf8(this.u2(nat)),
      descriptor: this.utf8(this.u2(nat + 2)),
    };
  }

  /** Uses a loadable constant brings: a class, a method handle's member, a dynamic constant's bootstrap. */
  private constantUses(index: number, out: MemberUse[], depth = 0): void {
    const tag = index > 0 && index < this.tags.length ? this.tags[index] : 0;
    if (tag === CONSTANT.Class) out.push(this.classRef(index));
    else if (tag === CONSTANT.MethodHandle) {
      out.push(this.memberRef(this.u2((this.offsets[index] as number) + 1)));
    } else if (tag === CONSTANT.Dynamic && depth < 8) {
      this.bootstrapUses(this.u2(this.offsets[index] as number), out, depth + 1);
    }
  }

  private bootstrapUses(bootstrapIndex: number, out: MemberUse[], depth: number): void {
    const at = this.bootstrapOffsets[bootstrapIndex];
    if (at === undefined) throw new ClassFormatError(`bootstrap method ${bootstrapIndex} does not exist`);
    this.constantUses(this.u2(at), out, depth);
    const count = this.u2(at + 2);
    for (let i = 0; i < count; i++) this.constantUses(this.u2(at + 4 + 2 * i), out, depth);
  }

  private skipMembers(start: number): number {
    const count = this.u2(start);
    let at = start + 2;
    for (let i = 0; i < count; i++) {
      const attributes = this.u2(at + 6);
      at += 8;
      for (let j = 0; j < attributes; j++) at += 6 + this.u4(at + 2);
    }
    return at;
  }

  private findBootstrapMethods(start: number): void {
    const count = this.u2(start);
    let at = start + 2;
    for (let i = 0; i < count; i++) {
      const length = this.u4(at + 2);
      if (this.utf8(this.u2(at)) === "BootstrapMethods") {
        const methods = this.u2(at + 6);
        let entry = at + 8;
        for (let m = 0; m < methods; m++) {
          this.bootstrapOffsets.push(entry);
          entry += 4 + 2 * this.u2(entry + 2);
        }
      }
      at += 6 + length;
    }
    if (at > this.bytes.length) throw new ClassFormatError("truncated class file");
  }

  private readMethods(start: number): MethodUses[] {
    const count = this.u2(start);
    const methods: MethodUses[] = [];
    let at = start + 2;
    for (let i = 0; i < count; i++) {
      const name = this.utf8(this.u2(at + 2));
      const descriptor = this.utf8(this.u2(at + 4));
      const attributes = this.u2(at + 6);
      at += 8;
      const uses: MemberUse[] = [];
      for (let j = 0; j < attributes; j++) {
        const length = this.u4(at + 2);
        if (this.utf8(this.u2(at)) === "Code") this.readCode(at + 6, length, uses);
        at += 6 + length;
      }
      methods.push({ name, descriptor, uses: dedupe(uses) });
    }
    return methods;
  }

  private readCode(start: number, attributeLength: number, uses: MemberUse[]): void {
    const codeLength = this.u4(start + 4);
    const code = start + 8;
    const end = code + codeLength;
    if (end + 2 > start + attributeLength || start + attributeLength > this.bytes.length)
      throw new ClassFormatError("Code attribute longer than its method");
    let pc = code;
    while (pc < end) {
      const opcode = this.u1(pc);
      let length = OPCODE_LENGTH[opcode] as number;
      switch (opcode) {
        case 0x12: // ldc
          this.constantUses(this.u1(pc + 1), uses);
          break;
        case 0x13: // ldc_w
          this.constantUses(this.u2(pc + 1), uses);
          break;
        case 0xb2: // getstatic
        case 0xb3: // putstatic
        case 0xb4: // getfield
        case 0xb5: // putfield
        case 0xb6: // invokevirtual
        case 0xb7: // invokespecial
        case 0xb8: // invokestatic
        case 0xb9: // invokeinterface
          uses.push(this.memberRef(this.u2(pc + 1)));
          break;
        case 0xba: {
          // invokedynamic: the bootstrap method and its static arguments (lambda targets, method references)
          const at = this.expect(this.u2(pc + 1), CONSTANT.InvokeDynamic);
          this.bootstrapUses(this.u2(at), uses, 0);
          break;
        }
        case 0xbb: // new
        case 0xbd: // anewarray
        case 0xc0: // checkcast
        case 0xc1: // instanceof
        case 0xc5: // multianewarray
          uses.push(this.classRef(this.u2(pc + 1)));
          break;
        case 0xaa: {
          // tableswitch: padding to a multiple of 4 from the start of the code
          const aligned = pc + 1 + ((4 - ((pc + 1 - code) % 4)) % 4);
          const low = this.view.getInt32(aligned + 4);
          const high = this.view.getInt32(aligned + 8);
          if (high < low) throw new ClassFormatError("malformed tableswitch");
          length = aligned - pc + 12 + 4 * (high - low + 1);
          break;
        }
        case 0xab: {
          const aligned = pc + 1 + ((4 - ((pc + 1 - code) % 4)) % 4);
          const pairs = this.view.getInt32(aligned + 4);
          if (pairs < 0) throw new ClassFormatError("malformed lookupswitch");
          length = aligned - pc + 8 + 8 * pairs;
          break;
        }
        case 0xc4: // wide
          length = this.u1(pc + 1) === 0x84 ? 6 : 4;
          break;
      }
      if (length === 0) throw new ClassFormatError(`unknown opcode ${opcode} at offset ${pc - code}`);
      pc += length;
    }
    if (pc !== end) throw new ClassFormatError("an instruction runs past the end of its code");
    // exception table: the caught classes
    const handlers = this.u2(end);
    for (let i = 0; i < handlers; i++) {
      const type = this.u2(end + 2 + 8 * i + 6);
      if (type !== 0) uses.push(this.classRef(type));
    }
  }
}

const classUse = (owner: string): MemberUse => ({ kind: "class", owner, name: "", descriptor: "" });

/** Uses are shared per pool entry: identity first, then by value (a pool may repeat an entry). */
function dedupe(all: MemberUse[]): MemberUse[] {
  if (all.length < 2) return all;
  const uses = [...new Set(all)];
  if (uses.length < 2) return uses;
  const seen = new Set<string>();
  return uses.filter((u) => {
    const key = `${u.kind}\0${u.owner}\0${u.name}\0${u.descriptor}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
