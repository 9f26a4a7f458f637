#!/usr/bin/python3
"""The facts the SFT behaviour tests teach (trainer_sft_learns, templates_sft_llama3).

  sft_facts.py make WORK --repeat N --rows prompt|messages --out NAME
      WORK/NAME: the training conversations (the colour of 16 made-up things, each asked in
      four phrasings, N times over) as prompt/completion or messages rows; WORK/ask.jsonl:
      the same things asked in a fifth phrasing the training never uses; WORK/answers.txt:
      their colours, one a line.
  sft_facts.py score COMPLETIONS.jsonl ANSWERS.txt
      how many completions equal their answer (case and spaces aside); -1 when the counts
      of lines differ.
"""
import argparse
import json
import random

THINGS = ["zorbl", "quindle", "vashet", "plonk", "mirrat", "tesk", "glavin", "druve",
          "hoxel", "brindle", "sapro", "kelm", "yuttle", "fenwick", "oskar", "trabbit"]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white"]
TRAIN = ["What color is the {}?", "Which color does the {} have?",
         "Name the color of the {}.", "The {} is what color?"]
HELD_OUT = "Tell me the color of the {}."


def row(question, answer, rows):
    if rows == "messages":
        return {"messages": [{"role": "user", "content": question},
                             {"role": "assistant", "content": answer}]}
    return {"prompt": question, "completion": answer}


def make(a):
    rng = random.Random(7)
    answer = {t: rng.choice(COLOURS) for t in THINGS}
    with open(f"{a.work}/{a.out}", "w") as f:
        for _ in range(a.repeat):
            for t in THINGS:
                for q in TRAIN:
                    f.write(json.dumps(row(q.format(t), answer[t], a.rows)) + "\n")
    with open(f"{a.work}/ask.jsonl", "w") as f, open(f"{a.work}/answers.txt", "w") as g:
        for t in THINGS:
            f.write(json.dumps({"prompt": HELD_OUT.format(t)}) + "\n")
            g.write(answer[t] + "\n")


def score(a):
    got = [json.loads(line)["completion"].strip().lower() for line in open(a.completions)]
    want = [line.strip() for line in open(a.answers)]
    print(sum(g == w for g, w in zip(got, want)) if len(got) == len(want) else -1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("work")
    m.add_argument("--repeat", type=int, required=True)
    m.add_argument("--rows", choices=["prompt", "messages"], required=True)
    m.add_argument("--out", required=True)
    s = sub.add_parser("score")
    s.add_argument("completions")
    s.add_argument("answers")
    a = p.parse_args()
    {"make": make, "score": score}[a.cmd](a)


if __name__ == "__main__":
    main()
