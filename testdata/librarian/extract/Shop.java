package com.example.shop;

import java.util.List;
import static java.util.Objects.requireNonNull;

/** A shop that sells items. */
public class Shop implements Store {
    private final List<String> items;

    public Shop(List<String> items) {
        this.items = requireNonNull(items);
    }

    public int count() {
        return items.size();
    }

    enum Kind { SMALL, LARGE }
}

interface Store {
    int count();
    default boolean empty() {
        return count() == 0;
    }
}
