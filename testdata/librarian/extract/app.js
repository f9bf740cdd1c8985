import { readFile } from "fs/promises";
const path = require("path");

/**
 * Greets a user by name.
 */
export function greet(name) {
  return `hello ${name}`;
}

const shout = (text) => {
  return text.toUpperCase();
};

class Greeter {
  constructor(prefix) {
    this.prefix = prefix;
  }

  greetAll(names) {
    return names.map((n) => greet(n));
  }
}

async function main() {
  const g = new Greeter(">");
  console.log(g.greetAll(["a"]), path.join("a", "b"));
  await readFile("x");
}
