import React from "react";

interface Props {
  title: string;
}

export function Title(props: Props) {
  return <h1>{props.title}</h1>;
}

export const Page = () => {
  return <Title title="x" />;
};
