#include <stdio.h>
#include "list.h"

/* A singly linked list node. */
struct node {
  int value;
  struct node *next;
};

typedef struct {
  struct node *head;
} list_t;

typedef int (*visit_fn)(int);

static int print_value(int v) {
  return printf("%d\n", v);
}

/* Visits every node. */
void list_each(list_t *list, visit_fn fn) {
  for (struct node *n = list->head; n; n = n->next) {
    fn(n->value);
  }
}

int main(void) {
  list_t list = {0};
  list_each(&list, print_value);
  return 0;
}
