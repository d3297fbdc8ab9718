/*
 * zipc::Queue, multi-producer multi-consumer ring (VyukovRing) with its
 * crash recovery, as a Promela model for spin. docs/design/queue.md,
 * "A machine-checked model", says what is modelled and what is not; the
 * code it follows is src/queue/vyukov_ring.cpp (try_reserve, commit, abort,
 * try_acquire, release, can_produce, can_consume), src/queue/queue_wait.hpp
 * (acquire_wait: closed, then recover() and one more try) and
 * src/queue/queue_recovery.cpp (recover, holder_dead, repair_orphan_hint).
 *
 * One atomic statement per load, store or CAS of a shared word. A crash may
 * happen before any store or CAS of a participant (a crash before a load
 * is the same, to everyone else, as one before the next store): it marks the
 * participant dead and ends it. Ghost variables (g_*) carry the properties.
 *
 * Switches (spin -D...):
 *   MAXCRASH   crashes in one run (default 1)
 *   MSGS       messages per producer (default 2; the test uses 1)
 *   MSGS1      the second producer's, when it differs (0: one producer)
 *   MUTATION   0 the protocol as written; 1 recovery takes a position without
 *              asking whether its holder is alive; 2 recovery acts on the
 *              holder it looked up without re-reading the owner and seq words
 *              (the guard against a holder that moved on meanwhile)
 *   STRICT_CLOSE 1: also require delivery of a message whose consumer died
 *              holding it while another consumer was ending on `closed`
 *              (fails: docs/design/queue.md, "A machine-checked model", the
 *              first finding; the library leaves such a message for a later
 *              receive call)
 */
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef MSGS
#define MSGS 2
#endif
#ifndef MSGS1
#define MSGS1 MSGS     /* the second producer's */
#endif
#ifndef MUTATION
#define MUTATION 0
#endif

#ifndef STRICT_CLOSE
#define STRICT_CLOSE 0
#endif

#define CAP 2          /* cells (a power of two) */
#define NP 2           /* producers: records 0 .. NP-1 */
#define NC 2           /* consumers: records NP .. NP+NC-1 */
#define NR (NP + NC)   /* participant records */
#define NMSG (NP * MSGS)

/* seq word: value | flags (kSeqAbandoned, kSeqOrphan) */
#define AB 64
#define OR 128
#define FLAGS (AB | OR)
#define VAL(s) ((s) & 63)

/* owner word: (slot + 1) << 4 | tag, tag = 2 * pos + phase (< 16 here) */
#define OWNER(slot, pos, ph) ((((slot) + 1) << 4) | (2 * (pos) + (ph)))
#define OTAG(o) ((o) & 15)
#define OSLOT1(o) ((o) >> 4)

/* ---- shared words of the segment */
byte seq[CAP];
byte owner[CAP];
byte tail;
byte head;
bit closed;
byte ocount;           /* orphans hint, low half: count */
byte oepoch;           /* orphans hint, high half: epoch */
byte redelivered;
byte abandoned;
byte claim[NR];        /* 2 * pos + phase + 1, 0: none (claim_count is 1: one position per call) */
bit alive[NR];         /* the record's pid and its liveness: 0 once the process died */

/* ---- ghosts */
byte cell_msg[CAP];    /* payload: message id, 0 while being written */
byte pos_msg[NMSG + 1];/* id committed at a position */
bit committed[NMSG + 1];
bit g_unserved[NMSG + 1]; /* its consumer died holding it while another one was ending on `closed` */
byte reads[NMSG + 1];  /* times a consumer read the message */
byte releases[NMSG + 1];
byte g_dead_reservations; /* producers that died holding a reservation */
byte g_cons_ok;        /* consumers that ended with `closed` */
byte g_closing;        /* consumers that saw `closed` and run their last recover() and try */
byte g_cons_last;      /* ... of which after every producer had ended */
byte g_cons_dead;
byte g_prod_done;      /* producers ended (or dead) */
byte crashes;
bit g_stuck;           /* a timeout fired and nothing has progressed since */

#define PROGRESS g_stuck = 0

/* A crash before the store or CAS `s`, or `s` itself. A producer that dies
 * between its tail CAS and its commit (or abort) leaves a dead reservation. */
#define CRASHED \
  if \
  :: me < NP -> g_prod_done++; if :: reserved -> g_dead_reservations++ :: else -> skip fi \
  :: else -> g_cons_dead++; \
    if :: (holding && g_closing > 0 && !STRICT_CLOSE) -> g_unserved[pos_msg[pos]] = 1 :: else -> skip fi \
  fi
#define W(s) if :: atomic { crashes < MAXCRASH -> crashes++; alive[me] = 0; CRASHED; PROGRESS; goto dead } :: atomic { (1) -> s } fi

/* ---------------------------------------------------------------- recover()
 * Locals it uses (declared by the caller): rs rp rbase ri rj ro1 rcl rhd rtl
 * rdead rrec rseen[NR] rfound rok. Returns the count in rrec. */
inline holder_dead(ph) {
  /* o1 = owner (acquire) */
  ro1 = owner[ri];
  rdead = 1;
  if
  :: (OTAG(ro1) == 2 * rp + ph && OSLOT1(ro1) >= 1 && OSLOT1(ro1) <= NR) -> rdead = !rseen[OSLOT1(ro1) - 1]
  :: else ->
    rj = 0;
    do
    :: (rj < NR && rdead) ->
      if
      :: rseen[rj] ->
        rcl = claim[rj];
        if
        :: (rcl != 0 && ((rcl - 1) & 1) == ph && ((rcl - 1) >> 1) == rp) -> rdead = 0
        :: else -> skip
        fi
      :: else -> skip
      fi;
      rj++
    :: else -> break
    od
  fi;
#if MUTATION == 1
  rdead = 1;
#endif
#if MUTATION != 2
  if
  :: rdead -> rdead = (owner[ri] == ro1);
    if :: rdead -> rdead = (seq[ri] == rs) :: else -> skip fi
  :: else -> skip
  fi
#endif
}

inline recover() {
  rrec = 0;
  /* repair_orphan_hint: a lost count is raised again */
  if
  :: ocount == 0 ->
    ri = 0;
    do
    :: ri < CAP ->
      rs = seq[ri];
      if
      :: ((rs & FLAGS) == OR && ((VAL(rs) - 1) % CAP) == ri) ->
        W(ocount++; oepoch++; PROGRESS);
        break
      :: else -> ri++
      fi
    :: else -> break
    od
  :: else -> skip
  fi;
  /* liveness of every record, judged once per scan (class Liveness) */
  rfound = 0;
  ri = 0;
  do
  :: ri < NR -> rseen[ri] = alive[ri]; rfound = rfound || !rseen[ri]; ri++
  :: else -> break
  od;
  if
  :: rfound ->
    rhd = head;
    rtl = tail;
    ri = 0;
    do
    :: ri < CAP ->
      rs = seq[ri];
      rbase = VAL(rs);
      if
      :: (rs & OR) -> skip
      :: (rs & AB) ->
        /* a consumer was passing an abandoned block and died? */
        rp = rbase - 1;
        if
        :: ((rp % CAP) == ri && rhd > rp) ->
          holder_dead(1);
          if
          :: rdead -> W(if :: seq[ri] == rs -> seq[ri] = rp + CAP; rrec++; PROGRESS :: else -> skip fi)
          :: else -> skip
          fi
        :: else -> skip
        fi
      :: (!(rs & FLAGS) && (rbase % CAP) == ri) ->
        /* free for lap rbase: held by a producer when tail moved past it */
        rp = rbase;
        if
        :: (rtl > rp && rtl - rp <= CAP) ->
          holder_dead(0);
          if
          :: rdead -> W(if :: seq[ri] == rs -> seq[ri] = (rp + 1) | AB; abandoned++; rrec++; PROGRESS :: else -> skip fi)
          :: else -> skip
          fi
        :: else -> skip
        fi
      :: (!(rs & FLAGS) && (rbase % CAP) != ri && ((rbase - 1) % CAP) == ri) ->
        /* committed at rbase - 1: held by a consumer when head moved past it */
        rp = rbase - 1;
        if
        :: (rhd > rp && rhd - rp <= CAP) ->
          holder_dead(1);
          if
          :: rdead ->
            rok = 0;
            W(if :: seq[ri] == rs -> seq[ri] = (rp + 1) | OR; rok = 1; rrec++; PROGRESS :: else -> skip fi);
            if
            :: rok -> W(ocount++; oepoch++; PROGRESS)
            :: else -> skip
            fi
          :: else -> skip
          fi
        :: else -> skip
        fi
      :: else -> skip
      fi;
      ri++
    :: else -> break
    od
  :: else -> skip
  fi;
  /* (forget the scan's locals: fewer distinct states) */
  atomic { rs = 0; rp = 0; rbase = 0; ri = 0; rj = 0; ro1 = 0; rcl = 0; rhd = 0; rtl = 0; rdead = 0; rfound = 0; rok = 0;
           rseen[0] = 0; rseen[1] = 0; rseen[2] = 0; rseen[3] = 0 }
}

/* A participant that found nothing to do sleeps until its wait predicate
 * holds, or (the stall clock) until the whole system is stuck: then it
 * recovers. Two stuck wake-ups in a row without any progress between them
 * mean nobody can ever progress again. */
inline stall_wait(pred) {
  if
  :: atomic { pred -> skip }
  :: atomic { timeout -> assert(!g_stuck); g_stuck = 1 }; recover()
  fi
}

/* ---------------------------------------------------------------- producer */

proctype Producer(byte me) {
  byte m = 0;            /* messages sent */
  byte pos; byte s; bit ok; bit reserved = 0; byte id; bit holding = 0;
  byte rs, rp, rbase, ri, rj, ro1, rcl, rhd, rtl, rrec; bit rdead, rfound, rok; bit rseen[NR];

  do
  :: (me == 0 && m == MSGS) || (me == 1 && m == MSGS1) -> break
  :: else ->
    atomic { id = me * MSGS + m + 1; pos = 0; s = 0; ok = 0 };
reserve:
    /* try_reserve (max = 1) */
    if
    :: closed -> goto finish
    :: else -> skip
    fi;
retry:
    pos = tail;
    s = seq[pos % CAP];
    if
    :: ((s & FLAGS) != 0 || s < pos) -> goto ring_full
    :: (s > pos) -> goto retry
    :: else -> skip
    fi;
    W(claim[me] = 2 * pos + 1);
    W(if :: tail == pos -> tail = pos + 1; ok = 1; reserved = 1; PROGRESS :: else -> ok = 0 fi);
    if
    :: !ok -> W(claim[me] = 0); goto retry
    :: else -> skip
    fi;
    W(owner[pos % CAP] = OWNER(me, pos, 0));
    W(claim[me] = 0);
    if
    :: closed ->
      W(seq[pos % CAP] = (pos + 1) | AB; reserved = 0; PROGRESS);
      goto finish
    :: else -> skip
    fi;
    /* the payload: garbage while it is written */
    W(cell_msg[pos % CAP] = 0);
    W(cell_msg[pos % CAP] = id);
    if
    :: W(seq[pos % CAP] = pos + 1; committed[id] = 1; pos_msg[pos] = id; reserved = 0; PROGRESS)
    :: W(seq[pos % CAP] = (pos + 1) | AB; reserved = 0; PROGRESS)  /* a loan aborted */
    fi;
    m++;
    goto next;
ring_full:
    stall_wait(closed || ((seq[tail % CAP] & FLAGS) == 0 && seq[tail % CAP] >= tail));
    rrec = 0;
    goto reserve;
next:
    skip
  od;
finish:
  atomic { g_prod_done++; PROGRESS };
  goto end;
dead:
  skip;
end:
  skip
}

/* ---------------------------------------------------------------- consumer */

proctype Consumer(byte me) {
  byte pos; byte s; byte si; bit ok; byte i; byte p; byte hc; byte he; bit got;
  byte st;               /* 0 ok, 1 empty, 2 closed */
  bit reserved = 0;      /* (a producer's) */
  bit again = 0;         /* acquire_wait's one more try after a recovery */
  bit late = 0;          /* (ghost) saw `closed` after every producer had ended */
  bit holding = 0;       /* (ghost) holds position pos (acquired, not yet released) */
  bit closing = 0;       /* (ghost) saw `closed`: in its last recover() and try */
  byte id;
  byte rs, rp, rbase, ri, rj, ro1, rcl, rhd, rtl, rrec; bit rdead, rfound, rok; bit rseen[NR];

acquire:
  /* ---- try_acquire (max = 1): orphans first */
  atomic { rrec = 0; s = 0; si = 0; i = 0; p = 0; ok = 0; got = 0; st = 0; id = 0; pos = 0; hc = ocount; he = oepoch };
  if
  :: hc != 0 ->
    i = 0;
    do
    :: i < CAP ->
      s = seq[i];
      if
      :: ((s & FLAGS) == OR && ((VAL(s) - 1) % CAP) == i) ->
        p = VAL(s) - 1;
        W(claim[me] = 2 * p + 2);
        W(if :: seq[i] == s -> seq[i] = p + 1; ok = 1; pos = p; holding = 1; PROGRESS :: else -> ok = 0 fi);
        if
        :: ok ->
          W(owner[i] = OWNER(me, p, 1));
          W(claim[me] = 0);
          /* count it off, never below zero */
          atomic { hc = ocount; he = oepoch };
          do
          :: hc == 0 -> break
          :: else -> W(if :: (ocount == hc && oepoch == he) -> ocount = hc - 1; ok = 0
                          :: else -> hc = ocount; he = oepoch fi);
                     if :: !ok -> break :: else -> skip fi
          od;
          W(redelivered++);
          pos = p;
          goto deliver
        :: else -> W(claim[me] = 0)
        fi
      :: else -> skip
      fi;
      i++
    :: else -> break
    od;
    /* none found: clear the count unless an orphan was marked since */
    W(if :: (ocount == hc && oepoch == he) -> ocount = 0 :: else -> skip fi)
  :: else -> skip
  fi;
retry:
  pos = head;
  s = seq[pos % CAP];
  if
  :: (s == pos + 1 || s == ((pos + 1) | AB)) -> skip
  :: else ->
    if
    :: ((s & FLAGS) != 0 || s < pos + 1) ->
      if
      :: !closed -> st = 1
      :: else -> atomic { if :: tail <= pos -> st = 2; late = (g_prod_done == NP) :: else -> st = 1 fi }
      fi;
      goto missed
    :: else -> goto retry
    fi
  fi;
  W(claim[me] = 2 * pos + 2);
  W(if :: head == pos -> head = pos + 1; ok = 1; holding = 1; PROGRESS :: else -> ok = 0 fi);
  if
  :: !ok -> W(claim[me] = 0); goto retry
  :: else -> skip
  fi;
  si = seq[pos % CAP];
  if
  :: (si & AB) -> W(seq[pos % CAP] = pos + CAP; holding = 0; PROGRESS); got = 0
  :: else -> W(owner[pos % CAP] = OWNER(me, pos, 1)); got = 1
  fi;
  W(claim[me] = 0);
  if
  :: got -> goto deliver
  :: else -> goto retry
  fi;

missed:
  /* acquire_wait: closed and drained, unless a dead consumer left orphans */
  if
  :: (st == 2 && !again) ->
    atomic { closing = 1; g_closing++ };
    recover();
    if
    :: (rrec > 0 || ocount != 0) -> again = 1; goto acquire   /* one more try, whose `closed` is final;
                                  also for an orphan whose count recover() repaired */
    :: else -> goto finish
    fi
  :: (st == 2 && again) -> goto finish
  :: else -> skip
  fi;
  atomic { again = 0; if :: closing -> closing = 0; g_closing-- :: else -> skip fi };
  stall_wait(ocount != 0 || seq[head % CAP] == head + 1 || seq[head % CAP] == ((head + 1) | AB) ||
             (closed && tail <= head));
  goto acquire;

deliver:
  /* read the payload, then release it (a copy receive, or a read loan) */
  atomic {
    if :: closing -> closing = 0; g_closing-- :: else -> skip fi;
    id = cell_msg[pos % CAP];
    assert(id != 0 && committed[id] && pos_msg[pos] == id);  /* never garbage, never uncommitted */
    reads[id]++
  };
  W(assert(cell_msg[pos % CAP] == id);   /* nobody overwrote it while we held it */
    seq[pos % CAP] = pos + CAP; releases[id]++; holding = 0; PROGRESS);
  again = 0;
  goto acquire;

finish:
  atomic { g_cons_ok++; g_cons_last = g_cons_last + late; PROGRESS };
  goto end;
dead:
  skip;
end:
  skip
}

/* ---------------------------------------------------------------- close() */
proctype Closer() {
  bit early;
  if :: early = 1 :: early = 0 fi;
  if
  :: early -> skip
  :: else -> (g_prod_done == NP || g_cons_dead == NC)
  fi;
  atomic { closed = 1; PROGRESS }
}

init {
  byte k;
  byte dups = 0;
  atomic {
    k = 0;
    do
    :: k < CAP -> seq[k] = k; k++
    :: else -> break
    od;
    k = 0;
    do
    :: k < NR -> alive[k] = 1; k++
    :: else -> break
    od;
    run Producer(0); run Producer(1);
    run Consumer(2); run Consumer(3);
    run Closer()
  };
  (_nr_pr == 1);
  /* ---- every run ends here: what holds after it */
  k = 1;
  do
  :: k <= NMSG ->
    assert(releases[k] <= 1);                              /* never released twice */
    assert(releases[k] == 0 || committed[k]);
    if :: reads[k] > 1 -> dups = dups + reads[k] - 1 :: else -> skip fi;
    if
    :: g_cons_ok > 0 -> assert(!committed[k] || releases[k] == 1 || g_unserved[k])   /* nothing committed is lost */
    :: else -> skip
    fi;
    k++
  :: else -> break
  od;
  assert(dups <= redelivered);                             /* duplicates only as redeliveries */
  assert(abandoned <= g_dead_reservations);                /* never counted twice */
  /* A consumer that ended after every producer: nothing left in flight. (One
   * that ended before may leave a reservation a producer took after it and
   * died holding: nothing committed, nobody left to pass it.) */
  if
  :: g_cons_last > 0 ->
    assert(head == tail);                                  /* drained */
    assert(abandoned == g_dead_reservations);              /* each dead reservation counted once */
    k = 0;
    do
    :: k < CAP -> assert(!(seq[k] & OR)); k++              /* no orphan left behind */
    :: else -> break
    od
  :: else -> skip
  fi
}
